import { uuidArraySql } from '../../platform/database/uuid';
import { ownedBy } from '../../platform/database/tenancy';
import { checkResourceLists } from './tools.input';
import type { ServiceContext } from '../../platform/service-context';

/** The caller's Administrator organizations and headquarters, whose records they may address. */
interface Scope {
  organizations: readonly string[];
  headquarters: readonly string[];
}

/** The records a legacy consumer can address, each with the condition under which the caller may see it (`x` is the record). */
const ADDRESSABLE: ReadonlyArray<{ table: string; visible: (s: Scope) => string }> = [
  { table: 'organization', visible: (s) => ownedBy('x.id', s.organizations) },
  {
    table: 'headquarter',
    visible: (s) => `x.id = any(${uuidArraySql(s.headquarters)})
      or exists (select 1 from organization o where o.headquarter_id = x.id and ${ownedBy('o.id', s.organizations)})`,
  },
  { table: 'app_user', visible: (s) => `exists (select 1 from membership m where m.user_id = x.id and ${ownedBy('m.organization_id', s.organizations)})` },
  { table: 'project', visible: (s) => ownedBy('x.organization_id', s.organizations) },
  { table: 'project_trade', visible: (s) => `exists (select 1 from project p where p.id = x.project_id and ${ownedBy('p.organization_id', s.organizations)})` },
  { table: 'template', visible: (s) => `exists (select 1 from project p where p.id = x.project_id and ${ownedBy('p.organization_id', s.organizations)})` },
  {
    table: 'document',
    visible: (s) => `exists (select 1 from template t join project p on p.id = t.project_id
      where t.id = x.template_id and ${ownedBy('p.organization_id', s.organizations)})`,
  },
  { table: 'contractor', visible: (s) => ownedBy('x.organization_id', s.organizations) },
  { table: 'trade_list', visible: (s) => `x.organization_id is null or ${ownedBy('x.organization_id', s.organizations)}` },
  {
    table: 'trade_list_trade',
    visible: (s) => `exists (select 1 from trade_list l where l.id = x.trade_list_id
      and (l.organization_id is null or ${ownedBy('l.organization_id', s.organizations)}))`,
  },
];

/**
 * One statement over every addressable table, whatever the number of identifiers: `wanted` holds the
 * identifiers asked for (one JSON parameter: legacy identifiers are text, and no bind-parameter limit applies),
 * each table contributes the records it holds and the caller may see.
 */
function conversionSql(direction: 'toUuid' | 'toLegacy', scope: Scope): string {
  const [wanted, match, answer] = direction === 'toUuid'
    ? ['value', 'x.legacy_id = w.key', 'x.id::text']
    : ['value::uuid', 'x.id = w.key', 'x.legacy_id'];
  const branches = ADDRESSABLE.map(({ table, visible }) =>
    `select w.key::text as key, ${answer} as value from ${table} x join wanted w on ${match} where ${visible(scope)}`);
  return `
    with wanted as (select distinct ${wanted} as key from jsonb_array_elements_text(?::jsonb))
    ${branches.join('\n    union all\n    ')}`;
}

/** Converts between legacy identifiers and UUIDs (#25, #32), for records the caller may see. */
export class LegacyIdService {
  constructor(private readonly sc: ServiceContext) {}

  /** #25: the UUID of each legacy identifier, null when unknown or not the caller's; keeps the nesting. */
  idsToUuids(resources: unknown[] | null | undefined): Promise<(string | null)[][]> {
    return this.convert(checkResourceLists(resources, 'legacy'), 'toUuid', (id) => id);
  }

  /** #32: the legacy identifier of each UUID, null when unknown or not the caller's; keeps the nesting. */
  uuidsToIds(resources: unknown[] | null | undefined): Promise<(string | null)[][]> {
    return this.convert(checkResourceLists(resources, 'uuid'), 'toLegacy', (id) => id.toLowerCase());
  }

  private async convert(lists: string[][], direction: 'toUuid' | 'toLegacy', keyOf: (id: string) => string): Promise<(string | null)[][]> {
    const keys = [...new Set(lists.flat().map(keyOf))];
    const found = new Map<string, string>();
    if (keys.length) {
      const scope = { organizations: this.sc.caller.adminOrganizationIds, headquarters: this.sc.caller.adminHeadquarterIds };
      const rows = await this.sc.em.execute<{ key: string; value: string }[]>(conversionSql(direction, scope), [JSON.stringify(keys)]);
      for (const r of rows) if (!found.has(r.key)) found.set(r.key, r.value);
    }
    return lists.map((list) => list.map((id) => found.get(keyOf(id)) ?? null));
  }
}
