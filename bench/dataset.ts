import { DEMO_IDS } from '../src/seed/demo-data';

/**
 * The dashboard data set of issue 10, built in a handful of set-based statements whatever its size.
 *
 * On top of the demo data (5 projects, 11 templates and slices, 25 documents, 22 versions) it adds, for the
 * demo architect's two organizations (Atelier Demo and Atelier Nord, every other project each):
 * - `projects` projects (default 1,000), each with 6 trades whose first is split into 2 slices: 8 templates
 *   and slices per project;
 * - 6 invited contractors per template or slice (out of 50 per organization), intentions YES/NO/MAYBE/none;
 * - 2 versions per document on average, in six histories (by document): none; DECLINED; ANSWERED then
 *   IN_REVISION; ANSWERED, IN_REVISION, ANSWERED; ANSWERED then DRAFT; DRAFT, ANSWERED, IN_REVISION, DRAFT;
 * - a selected consultation on a third of the templates.
 * With the defaults that is the issue's 1,005 projects, 8,011 templates and slices, 48,025 documents and
 * 96,022 versions.
 *
 * `otherOrganizationsFactor` F adds F architect organizations of other owners ("Bench Org n", nobody of the
 * demo is a member), each with as many rows as the demo architect's: F times more rows the architect may
 * not see, for "flat at any database size" measures.
 *
 * Rows of the architect carry legacy ids starting with `BENCH`, rows of the other organizations `OTHER`.
 */
export interface DatasetOptions {
  /** Projects of the demo architect's organizations (default 1,000). */
  projects?: number;
  /** How many times more rows, in organizations the architect does not belong to (default 0). */
  otherOrganizationsFactor?: number;
}

export interface DatasetCounts {
  projects: number;
  templates: number;
  documents: number;
  versions: number;
}

const TRADES_PER_PROJECT = 6;
const SLICES_OF_FIRST_TRADE = 2;
const DOCUMENTS_PER_TEMPLATE = 6;
const CONTRACTORS_PER_ORGANIZATION = 50;

const ORG = DEMO_IDS.organizations;

/**
 * The owners of the rows: legacy prefix, organization, number of projects. The architect's projects
 * alternate between the two organizations the architect administers.
 */
function ownersCte(parts: readonly Part[], projects: number): string {
  const architect = `select 'BENCH' as prefix, o.id as org_id, o.projects
    from (values ('${ORG.atelierDemo}'::uuid, ${Math.ceil(projects / 2)}), ('${ORG.atelierNord}'::uuid, ${Math.floor(projects / 2)})) o(id, projects)`;
  const others = `select 'OTHER' as prefix, o.id as org_id, ${projects} as projects from organization o where o.legacy_id like 'OTHERORG%'`;
  return `owners as (${[parts.includes('BENCH') ? architect : null, parts.includes('OTHER') ? others : null].filter(Boolean).join(' union all ')})`;
}

/** `legacy_id like 'BENCHxxx%' or ...` for the parts being built. */
const ofParts = (parts: readonly Part[], column: string, kind: string) =>
  `(${parts.map((p) => `${column} like '${p}${kind}%'`).join(' or ')})`;

/**
 * Every row's id and times are derived from its legacy id and one instant, never random or the clock's: the same
 * data set loaded twice (with triggers and without, test/derived-data.test.ts) is the same rows. Ids are the md5
 * of the legacy id shaped as a version 4 UUID (version and variant digits set), which the API's validation accepts.
 */
const AT = `timestamptz '2026-11-01 08:00:00+00'`;

/** `prefix || kind || 9 digits`: 17 characters, the legacy id format. */
const legacy = (prefix: string, kind: string, n: string) => `${prefix} || '${kind}' || lpad((${n})::text, 9, '0')`;

/** The architect's rows (`BENCH`) and the other organizations' (`OTHER`). */
type Part = 'BENCH' | 'OTHER';

/**
 * The statements that build the data set, in order: the architect's rows and the other organizations',
 * or only one of them (`parts`), so that a benchmark can measure at 1x, then add the others and measure again.
 */
export function datasetStatements(options: DatasetOptions = {}, parts: readonly Part[] = ['BENCH', 'OTHER']): string[] {
  const projects = Math.max(1, Math.floor(options.projects ?? 1000));
  const factor = parts.includes('OTHER') ? Math.max(0, Math.floor(options.otherOrganizationsFactor ?? 0)) : 0;
  if (factor === 0) parts = parts.filter((p) => p !== 'OTHER');
  if (parts.length === 0) return [];
  const owners = ownersCte(parts, projects);
  // Rows of owner prefix P numbered within P: the legacy ids stay unique whatever the factor.
  return withoutTriggers([
    `insert into organization (id, created_at, updated_at, legacy_id, name, kind, addresses, business_sectors)
     select overlay(overlay(md5('OTHERORG' || lpad(i::text, 9, '0')) placing '4' from 13) placing '8' from 17)::uuid, ${AT}, ${AT}, 'OTHERORG' || lpad(i::text, 9, '0'), 'Bench Org ' || i, 'ARCHITECT', '[]'::jsonb, '{}'::text[]
     from generate_series(1, ${factor}) i`,
    `with ${owners}, c as (
       select o.prefix, o.org_id, i from (select distinct prefix, org_id from owners) o cross join generate_series(1, ${CONTRACTORS_PER_ORGANIZATION}) i
     )
     insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email)
     select overlay(overlay(md5(${legacy('c.prefix', 'CTR', 'row_number() over (partition by c.prefix order by c.org_id, c.i)')}) placing '4' from 13) placing '8' from 17)::uuid, ${AT}, ${AT}, ${legacy('c.prefix', 'CTR', 'row_number() over (partition by c.prefix order by c.org_id, c.i)')},
       c.org_id, 'Entreprise ' || c.i, 'bench-' || c.i || '@example.test'
     from c`,
    `with ${owners}, p as (
       select o.prefix, o.org_id, i from owners o cross join lateral generate_series(1, o.projects) i
     )
     insert into project (id, created_at, updated_at, legacy_id, organization_id, name, construction_type, trade_list_id, response_type)
     select overlay(overlay(md5(${legacy('p.prefix', 'PRJ', 'row_number() over (partition by p.prefix order by p.i, p.org_id)')}) placing '4' from 13) placing '8' from 17)::uuid, ${AT} - (p.i || ' minutes')::interval, ${AT}, ${legacy('p.prefix', 'PRJ', 'row_number() over (partition by p.prefix order by p.i, p.org_id)')},
       p.org_id, 'Bench ' || p.i, 'office', '${DEMO_IDS.tradeLists.standard}', 'DPGF'
     from p`,
    `insert into project_trade (id, created_at, updated_at, legacy_id, project_id, number, name, short_name)
     select overlay(overlay(md5(${legacy('left(p.legacy_id, 5)', 'PTR', 'row_number() over (partition by left(p.legacy_id, 5) order by p.legacy_id, n)')}) placing '4' from 13) placing '8' from 17)::uuid, ${AT}, ${AT}, ${legacy('left(p.legacy_id, 5)', 'PTR', 'row_number() over (partition by left(p.legacy_id, 5) order by p.legacy_id, n)')},
       p.id, lpad(n::text, 2, '0'), 'Lot ' || n, 'L' || n
     from project p cross join generate_series(1, ${TRADES_PER_PROJECT}) n
     where ${ofParts(parts, 'p.legacy_id', 'PRJ')}`,
    `insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, budget)
     select overlay(overlay(md5(${legacy('left(pt.legacy_id, 5)', 'TPL', 'row_number() over (partition by left(pt.legacy_id, 5) order by pt.legacy_id)')}) placing '4' from 13) placing '8' from 17)::uuid, ${AT}, ${AT}, ${legacy('left(pt.legacy_id, 5)', 'TPL', 'row_number() over (partition by left(pt.legacy_id, 5) order by pt.legacy_id)')},
       pt.project_id, pt.id, 10000 + abs(hashtext(pt.id::text)) % 90000
     from project_trade pt where ${ofParts(parts, 'pt.legacy_id', 'PTR')}`,
    `insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, parent_id, is_slice, slice_name, budget)
     select overlay(overlay(md5(${legacy('left(t.legacy_id, 5)', 'SLC', 'row_number() over (partition by left(t.legacy_id, 5) order by t.legacy_id, k)')}) placing '4' from 13) placing '8' from 17)::uuid, ${AT}, ${AT}, ${legacy('left(t.legacy_id, 5)', 'SLC', 'row_number() over (partition by left(t.legacy_id, 5) order by t.legacy_id, k)')},
       t.project_id, t.trade_id, t.id, true, 'Tranche ' || k, round(t.budget / 3, 2)
     from template t join project_trade pt on pt.id = t.trade_id cross join generate_series(1, ${SLICES_OF_FIRST_TRADE}) k
     where ${ofParts(parts, 't.legacy_id', 'TPL')} and pt.number = '01'`,
    'analyze',
    // Six distinct contractors of the project's organization per template: consecutive indexes modulo 50.
    `with t as (
       select t.id, p.organization_id, left(t.legacy_id, 5) as prefix, row_number() over (order by t.legacy_id) as rn
       from template t join project p on p.id = t.project_id
       where ${ofParts(parts, 't.legacy_id', '')}
     ),
     c as (
       select c.id, c.organization_id, row_number() over (partition by c.organization_id order by c.legacy_id) - 1 as idx
       from contractor c where ${ofParts(parts, 'c.legacy_id', 'CTR')}
     )
     insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id, intention, dce_downloaded_at)
     select overlay(overlay(md5(${legacy('t.prefix', 'DOC', 'row_number() over (partition by t.prefix order by t.rn, k)')}) placing '4' from 13) placing '8' from 17)::uuid, ${AT}, ${AT}, ${legacy('t.prefix', 'DOC', 'row_number() over (partition by t.prefix order by t.rn, k)')}, t.id, c.id,
       (array['YES', 'NO', 'MAYBE', null])[1 + (t.rn + k) % 4], case when (t.rn + k) % 3 = 0 then null else ${AT} end
     from t cross join generate_series(0, ${DOCUMENTS_PER_TEMPLATE - 1}) k
     join c on c.organization_id = t.organization_id and c.idx = (t.rn * ${DOCUMENTS_PER_TEMPLATE} + k) % ${CONTRACTORS_PER_ORGANIZATION}`,
    'analyze',
    // History h of a document is its row number modulo 6; 0 + 1 + 2 + 3 + 2 + 4 = 12 versions per 6 documents.
    `with h(history, version, status) as (values
       (1, 1, 'DECLINED'),
       (2, 1, 'ANSWERED'), (2, 2, 'IN_REVISION'),
       (3, 1, 'ANSWERED'), (3, 2, 'IN_REVISION'), (3, 3, 'ANSWERED'),
       (4, 1, 'ANSWERED'), (4, 2, 'DRAFT'),
       (5, 1, 'DRAFT'), (5, 2, 'ANSWERED'), (5, 3, 'IN_REVISION'), (5, 4, 'DRAFT')
     ),
     d as (
       select d.id, d.template_id, t.budget, substring(d.legacy_id from 9)::bigint as rn
       from document d join template t on t.id = d.template_id
       where ${ofParts(parts, 'd.legacy_id', 'DOC')}
     )
     insert into document_version (id, created_at, updated_at, document_id, template_id, version, status, sub_total, discount, sent_at)
     select overlay(overlay(md5(d.id::text || ':' || h.version) placing '4' from 13) placing '8' from 17)::uuid, ${AT}, ${AT}, d.id, d.template_id, h.version, h.status,
       case when h.status = 'DECLINED' then 0 else round(d.budget * (0.85 + (d.rn % 30) / 100.0 + h.version / 50.0), 2) end,
       case when h.status = 'DECLINED' then 0 else (d.rn % 4) * 100 end,
       case when h.status = 'DRAFT' then null else ${AT} end
     from d join h on h.history = d.rn % 6`,
    'analyze',
    `update template t set selected_consultation_id = s.id
     from (select distinct on (template_id) template_id, id from document
           where ${ofParts(parts, 'legacy_id', 'DOC')} order by template_id, legacy_id) s
     where s.template_id = t.id and ${ofParts(parts, 't.legacy_id', '')} and abs(hashtext(t.id::text)) % 3 = 0`,
    'analyze',
  ]);
}

/**
 * Bulk statements run with `session_replication_role = replica`: foreign-key checks and the change events are off
 * (the rows are consistent by construction); the triggers that derive data fire anyway (ENABLE ALWAYS,
 * Migration20270205000000_derived_data), set-based, once per statement. The rebuild at the end changes nothing
 * then; it is what a schema before that migration needs. Needs a superuser, as `session_replication_role` does;
 * each statement is its own transaction.
 */
function withoutTriggers(statements: string[]): string[] {
  return [
    ...statements.map((sql) => (sql === 'analyze' ? sql : `set local session_replication_role = replica; ${sql}`)),
    `do $$ begin
       if exists (select 1 from pg_proc where proname = 'statistics_rebuild') then perform statistics_rebuild(); end if;
     end $$`,
    // As autovacuum leaves bulk-loaded tables a little later (its insert threshold): measured in that steady
    // state at once, rather than before or after it depending on when autovacuum comes by.
    'vacuum (analyze)',
  ];
}

type Run = <T>(sql: string) => Promise<T>;

/** Builds the data set on a migrated database holding the demo data; returns its row counts. */
export async function buildDataset(execute: Run, options: DatasetOptions = {}): Promise<DatasetCounts> {
  for (const sql of datasetStatements(options)) await execute(sql);
  return countRows(execute);
}

/** Adds the other organizations' rows to a data set built without them (`otherOrganizationsFactor` 0). */
export async function addOtherOrganizations(execute: Run, options: DatasetOptions): Promise<DatasetCounts> {
  for (const sql of datasetStatements(options, ['OTHER'])) await execute(sql);
  return countRows(execute, 'OTHER');
}

/**
 * Rows of the data set (`BENCH`: everything but the other organizations', demo data included, the issue's
 * figures) or of the other organizations alone (`OTHER`).
 */
async function countRows(execute: Run, part: Part = 'BENCH'): Promise<DatasetCounts> {
  const others = `(select id from organization where legacy_id like 'OTHERORG%')`;
  const where = `p.organization_id ${part === 'BENCH' ? 'not in' : 'in'} ${others}`;
  const rows = await execute<Array<Record<keyof DatasetCounts, string>>>(`
    select (select count(*) from project p where ${where}) as projects,
      (select count(*) from template t join project p on p.id = t.project_id where ${where}) as templates,
      (select count(*) from document d join template t on t.id = d.template_id join project p on p.id = t.project_id
        where ${where}) as documents,
      (select count(*) from document_version v join document d on d.id = v.document_id join template t on t.id = d.template_id
        join project p on p.id = t.project_id where ${where}) as versions`);
  const r = rows[0];
  return { projects: Number(r.projects), templates: Number(r.templates), documents: Number(r.documents), versions: Number(r.versions) };
}

/** Ids of the architect's bench projects (no demo project), in a stable order. */
export const BENCH_PROJECT_IDS_SQL = `select id from project where legacy_id like 'BENCHPRJ%' order by legacy_id`;
