import type { EntityManager } from '@mikro-orm/postgresql';
import { type AppError, ForbiddenError, UnauthenticatedError } from '../errors/errors';
import type { Caller } from './caller';
import type { VerifiedToken } from './token-verifier';
import { uuidArraySql, uuidList } from '../database/uuid';

interface CallerRow {
  id: string;
  email: string;
  api_access_granted: boolean;
  api_enabled: boolean;
  current_organization_id: string | null;
  admin_orgs: string[];
  active_admin_orgs: string[];
  hqs: string[];
}

/** The Administrator rule: who may use the API at all, and on which organizations. */
function callerOf(row: CallerRow | undefined): Caller | AppError {
  if (!row) return new UnauthenticatedError('The token subject is not a user of this service');
  if (!row.api_access_granted) return new ForbiddenError('API access has not been granted to this user');
  if (!row.api_enabled) return new ForbiddenError('The API is not activated for this user');
  if (row.admin_orgs.length === 0) return new ForbiddenError('The user is Administrator of no organization');
  if (row.active_admin_orgs.length === 0) return new ForbiddenError('The API is not activated for the organizations of this user');
  const current = row.current_organization_id && row.active_admin_orgs.includes(row.current_organization_id)
    ? row.current_organization_id
    : row.active_admin_orgs[0];
  return {
    userId: row.id,
    email: row.email,
    adminOrganizationIds: row.active_admin_orgs,
    currentOrganizationId: current,
    adminHeadquarterIds: row.hqs,
  };
}

/**
 * The authorization context of many users at once, in one SQL statement, by (lowercase) user id: a Caller, or
 * the error (401, 403) a request of theirs would get. A long-lived subscription re-checks its caller with it.
 */
export async function loadCallers(em: EntityManager, userIds: readonly string[]): Promise<Map<string, Caller | AppError>> {
  const ids = uuidList(userIds);
  const rows = ids.length ? await em.getConnection().execute<CallerRow[]>(`
    select u.id, u.email, u.api_access_granted, u.api_enabled, u.current_organization_id,
      coalesce(array_agg(o.id order by o.name, o.id) filter (where m.role = 'ADMINISTRATOR'), '{}') as admin_orgs,
      coalesce(array_agg(o.id order by o.name, o.id) filter (where m.role = 'ADMINISTRATOR' and o.api_enabled), '{}') as active_admin_orgs,
      (select coalesce(array_agg(ha.headquarter_id), '{}') from headquarter_admin ha where ha.user_id = u.id) as hqs
    from app_user u
    left join membership m on m.user_id = u.id
    left join organization o on o.id = m.organization_id and o.kind = 'ARCHITECT'
    where u.id = any(${uuidArraySql(ids)})
    group by u.id`) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return new Map(ids.map((id) => [id, callerOf(byId.get(id))]));
}

/**
 * Builds the caller's authorization context from a verified token, in one SQL statement: the
 * organizations where they are Administrator (with the API activated), their current one, their
 * headquarters. Refuses (403) users without API access or without any such organization.
 */
export async function loadCaller(em: EntityManager, token: VerifiedToken): Promise<Caller> {
  const caller = (await loadCallers(em, [token.sub])).get(token.sub.toLowerCase()) ?? callerOf(undefined);
  if (caller instanceof Error) throw caller;
  return caller;
}
