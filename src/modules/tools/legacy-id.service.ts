import { checkResourceLists } from './tools.input';
import type { ServiceContext } from '../../platform/service-context';

/**
 * The records a legacy consumer can address, each with the condition under which the caller may see it.
 * `mine` holds the caller's Administrator organizations, `my_hqs` their headquarters; `x` is the record.
 */
const ADDRESSABLE: ReadonlyArray<{ table: string; visible: string }> = [
  { table: 'organization', visible: 'x.id in (select id from mine)' },
  {
    table: 'headquarter',
    visible: `x.id in (select id from my_hqs)
      or exists (select 1 from organization o where o.headquarter_id = x.id and o.id in (select id from mine))`,
  },
  { table: 'app_user', visible: 'exists (select 1 from membership m where m.user_id = x.id and m.organization_id in (select id from mine))' },
  { table: 'project', visible: 'x.organization_id in (select id from mine)' },
  { table: 'project_trade', visible: 'exists (select 1 from project p where p.id = x.project_id and p.organization_id in (select id from mine))' },
  { table: 'template', visible: 'exists (select 1 from project p where p.id = x.project_id and p.organization_id in (select id from mine))' },
  {
    table: 'document',
    visible: `exists (select 1 from template t join project p on p.id = t.project_id
      where t.id = x.template_id and p.organization_id in (select id from mine))`,
  },
  { table: 'contractor', visible: 'x.organization_id in (select id from mine)' },
  { table: 'trade_list', visible: 'x.organization_id is null or x.organization_id in (select id from mine)' },
  {
    table: 'trade_list_trade',
    visible: `exists (select 1 from trade_list l where l.id = x.trade_list_id
      and (l.organization_id is null or l.organization_id in (select id from mine)))`,
  },
];

/**
 * One statement over every addressable table, whatever the number of identifiers: `wanted` holds the
 * identifiers asked for (one JSON parameter, so no bind-parameter limit), each table contributes the
 * records it holds and the caller may see.
 */
function conversionSql(direction: 'toUuid' | 'toLegacy'): string {
  const [wanted, match, answer] = direction === 'toUuid'
    ? ['value', 'x.legacy_id = w.key', 'x.id::text']
    : ['value::uuid', 'x.id = w.key', 'x.legacy_id'];
  const branches = ADDRESSABLE.map(({ table, visible }) =>
    `select w.key::text as key, ${answer} as value from ${table} x join wanted w on ${match} where ${visible}`);
  return `
    with wanted as (select distinct ${wanted} as key from jsonb_array_elements_text(?::jsonb)),
      mine as (select value::uuid as id from jsonb_array_elements_text(?::jsonb)),
      my_hqs as (select value::uuid as id from jsonb_array_elements_text(?::jsonb))
    ${branches.join('\n    union all\n    ')}`;
}

const IDS_TO_UUIDS_SQL = conversionSql('toUuid');
const UUIDS_TO_IDS_SQL = conversionSql('toLegacy');

/** Converts between legacy identifiers and UUIDs (#25, #32), for records the caller may see. */
export class LegacyIdService {
  constructor(private readonly sc: ServiceContext) {}

  /** #25: the UUID of each legacy identifier, null when unknown or not the caller's; keeps the nesting. */
  idsToUuids(resources: unknown[] | null | undefined): Promise<(string | null)[][]> {
    return this.convert(checkResourceLists(resources, 'legacy'), IDS_TO_UUIDS_SQL, (id) => id);
  }

  /** #32: the legacy identifier of each UUID, null when unknown or not the caller's; keeps the nesting. */
  uuidsToIds(resources: unknown[] | null | undefined): Promise<(string | null)[][]> {
    return this.convert(checkResourceLists(resources, 'uuid'), UUIDS_TO_IDS_SQL, (id) => id.toLowerCase());
  }

  private async convert(lists: string[][], sql: string, keyOf: (id: string) => string): Promise<(string | null)[][]> {
    const keys = [...new Set(lists.flat().map(keyOf))];
    const found = new Map<string, string>();
    if (keys.length) {
      const rows = await this.sc.em.execute<{ key: string; value: string }[]>(sql, [
        JSON.stringify(keys), JSON.stringify(this.sc.caller.adminOrganizationIds), JSON.stringify(this.sc.caller.adminHeadquarterIds),
      ]);
      for (const r of rows) if (!found.has(r.key)) found.set(r.key, r.value);
    }
    return lists.map((list) => list.map((id) => found.get(keyOf(id)) ?? null));
  }
}
