import { uuidArraySql } from '../../platform/database/uuid';
import { ownedBy } from '../../platform/database/tenancy';
import type { Caller } from '../../platform/auth/caller';
import { ForbiddenError, ValidationError, type FieldError } from '../../platform/errors/errors';
import type { CreditsUsageQuery } from './credits.input';
import type { ServiceContext } from '../../platform/service-context';
import { formatDay } from '../../platform/values/time';

export interface CreditsUsageView {
  total: number;
  /** YYYY-MM-DD, inclusive */
  from: string;
  /** YYYY-MM-DD, inclusive */
  to: string;
  scope: { type: 'organization' | 'headquarter'; id: string; name: string };
  organizations: { id: string; name: string; total: number }[];
}

interface UsageRow {
  scope_name: string;
  id: string | null;
  name: string | null;
  total: string;
  grand_total: string;
}

// Totals are summed by the database, per organization and overall (a window over the groups). Days are
// UTC days and `to` is inclusive: the period ends at the start of the next day, computed by the database
// as a date, which reaches past 9999-12-31 where a JS Date's ISO string would not be understood.
const LEDGER_JOIN = `left join credit_ledger_entry e on e.organization_id = o.id
  and e.created_at >= (?::date)::timestamp at time zone 'UTC' and e.created_at < (?::date + 1)::timestamp at time zone 'UTC'`;
const TOTALS = 'coalesce(sum(e.amount), 0)::bigint as total, sum(coalesce(sum(e.amount), 0)) over ()::bigint as grand_total';

/** An organization may be reported on by its Administrators and by the admins of its headquarter. */
const organizationUsageSql = (caller: Caller) => `
  select o.name as scope_name, o.id, o.name, ${TOTALS}
  from organization o
  ${LEDGER_JOIN}
  where o.id = ?
    and (${ownedBy('o.id', caller.adminOrganizationIds)} or o.headquarter_id = any(${uuidArraySql(caller.adminHeadquarterIds)}))
  group by o.id, o.name`;

const HEADQUARTER_USAGE_SQL = `
  select h.name as scope_name, o.id, o.name, ${TOTALS}
  from headquarter h
  left join organization o on o.headquarter_id = h.id
  ${LEDGER_JOIN}
  where h.id = ?
  group by h.name, o.id, o.name
  order by o.name, o.id`;

/** Credit consumption over a period, from the credits ledger (#35). */
export class CreditsService {
  constructor(private readonly sc: ServiceContext) {}

  /**
   * Usage of the current organization, of `organizationId` (Administrator, or admin of its headquarter)
   * or of every member organization of `headquarterId` (its admins): 403 for any other, known or not.
   */
  async usage(query: CreditsUsageQuery, today: Date = new Date()): Promise<CreditsUsageView> {
    const errors: FieldError[] = [];
    if (query.organizationId && query.headquarterId) {
      errors.push({ field: 'headquarterId', message: 'cannot be combined with organization_id' });
    }
    const to = query.to ?? formatDay(today);
    const from = query.from ?? `${to.slice(0, 8)}01`;
    if (from > to) errors.push({ field: 'from', message: 'must not be after to' });
    if (errors.length) throw new ValidationError(errors);

    const { caller } = this.sc;

    let rows: UsageRow[];
    let scope: CreditsUsageView['scope'];
    if (query.headquarterId) {
      const id = query.headquarterId.toLowerCase();
      if (!caller.adminHeadquarterIds.includes(id)) throw new ForbiddenError('You may not report on this headquarter');
      rows = await this.sc.em.execute<UsageRow[]>(HEADQUARTER_USAGE_SQL, [from, to, id]);
      if (!rows.length) throw new ForbiddenError('You may not report on this headquarter');
      scope = { type: 'headquarter', id, name: rows[0].scope_name };
    } else {
      const id = (query.organizationId ?? caller.currentOrganizationId).toLowerCase();
      rows = await this.sc.em.execute<UsageRow[]>(organizationUsageSql(caller), [from, to, id]);
      if (!rows.length) throw new ForbiddenError('You may not report on this organization');
      scope = { type: 'organization', id, name: rows[0].scope_name };
    }
    const organizations = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, name: r.name!, total: Number(r.total) }));
    return { total: Number(rows[0].grand_total), from, to, scope, organizations };
  }
}
