import fc from 'fast-check';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DEMO_ARCHITECT_CALLER, DEMO_IDS } from '../../src/seed/demo-data';
import { StatisticsService } from '../../src/modules/statistics/statistics.service';
import { startTestApp, type TestApp } from '../support/app';
import { maintainedOfferVersions, oracleOfferVersions, oracleProjectStatistics, oracleTemplateStats } from '../support/statistics-oracle';

/*
 * The statistics kept at write time (Migration20261220000000_statistics) against the formulas as they were
 * computed before, from the whole histories (test/support/statistics-oracle.ts): random histories of plain
 * SQL writes, as other parts of the platform make them (versions inserted, renumbered, moved, changed and
 * deleted, one at a time or many per statement; documents invited, changed, moved and deleted; budgets and
 * selected consultations changed, even to a document of another template; slices added and deleted;
 * templates moved to another project, one the caller may not see; projects moved to another organization;
 * writes that fail on a constraint, and
 * transactions rolled back), then every statistic of the projects and templates involved, compared.
 *
 * FUZZ_RUNS / 50 histories with npm run fuzz (400), 150 in npm test; FUZZ_SEED runs another sequence.
 */

const RUNS = process.env.FUZZ_RUNS ? Math.max(1, Math.floor(Number(process.env.FUZZ_RUNS) / 50)) : 150;
const SEED = Number(process.env.FUZZ_SEED ?? 20261220);
const ORG = DEMO_IDS.organizations;

const ARCHITECT = DEMO_ARCHITECT_CALLER;

let t: TestApp;
let contractors: string[];

beforeAll(async () => {
  t = await startTestApp();
  const rows = await t.orm.em.fork().getConnection().execute<Array<{ id: string }>>(`
    insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email)
    select gen_random_uuid(), now(), now(), 'FUZZCTR' || lpad(i::text, 10, '0'), ?, 'Fuzz ' || i, 'fuzz-' || i || '@example.test'
    from generate_series(1, 5) i returning id`, [ORG.atelierDemo]);
  contractors = rows.map((r) => r.id);
});
afterAll(() => t.close());

// ------------------------------------------------------------------------------------------------------
// Histories
// ------------------------------------------------------------------------------------------------------

const STATUSES = ['DRAFT', 'ANSWERED', 'IN_REVISION', 'DECLINED'] as const;
/** Amounts close enough that discounts reorder the offers, ties, cents, zero and the odd negative discount. */
const amount = fc.oneof(
  fc.constantFrom(0, 1000, 1000.5, 999.99, 1200, 950.25),
  fc.integer({ min: 90000, max: 110000 }).map((c) => c / 100),
);
const discount = fc.oneof(fc.constantFrom(0, 0, 50, 100.5, -20), fc.integer({ min: 0, max: 20000 }).map((c) => c / 100));
const pick = fc.nat({ max: 1000 });
const intention = fc.constantFrom(null, 'YES', 'NO', 'MAYBE');
/** A version's sending time (microseconds included), or none: the leveling reads the offer's. */
const sentAt = fc.option(fc.constantFrom('2026-11-02T09:00:00Z', '2026-11-03T17:45:12.345678Z', '2026-12-01T00:00:00.000001Z'));

const command = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('insertVersion' as const), doc: pick, version: fc.option(fc.integer({ min: 1, max: 5 })), status: fc.constantFrom(...STATUSES), subTotal: amount, discount, sentAt }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('updateVersion' as const), version: pick, status: fc.option(fc.constantFrom(...STATUSES)), subTotal: fc.option(amount), discount: fc.option(discount), number: fc.option(fc.integer({ min: 1, max: 6 })), moveTo: fc.option(pick), sentAt: fc.option(sentAt) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('deleteVersion' as const), version: pick }) },
  // Only the sending time changes: nothing but the offer's sent_at depends on it.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sendVersion' as const), version: pick, sentAt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('updateVersionsOfDocument' as const), doc: pick, status: fc.constantFrom(...STATUSES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteVersionsOfTemplate' as const), template: pick }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('insertDocument' as const), template: pick, contractor: pick, intention, dce: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('updateDocument' as const), doc: pick, intention: fc.option(intention), dce: fc.option(fc.boolean()), contractor: fc.option(pick), template: fc.option(pick) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteDocument' as const), doc: pick }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('budget' as const), template: pick, budget: amount }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('select' as const), template: pick, doc: fc.option(pick) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('slice' as const), template: pick, budget: amount }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteTemplate' as const), template: pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('moveTemplate' as const), template: pick, project: pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('projectOrganization' as const), project: pick, organization: fc.constantFrom(ORG.atelierDemo, ORG.atelierNord, ORG.cabinetSud) }) },
);
type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;
/** One command in ten runs in a transaction that is rolled back. */
const step = fc.record({ command, rollback: fc.nat({ max: 9 }).map((n) => n === 0) });

/** Documents the arena starts with, each with a few versions. */
const initialDocument = fc.record({
  template: pick, contractor: pick, intention, dce: fc.boolean(),
  versions: fc.array(fc.record({ status: fc.constantFrom('ANSWERED', ...STATUSES), sub_total: amount, discount, sent_at: sentAt }), { maxLength: 4 }),
});
type InitialDocument = typeof initialDocument extends fc.Arbitrary<infer D> ? D : never;

interface Arena {
  projects: string[];
  /** Every template the history created: deleted ones must stay absent from both answers. */
  templates: Set<string>;
}

/** Row `k` (modulo their number) of a set of ids, in id order; no row when the set is empty. */
const nth = (from: string, k: number) =>
  `(select id from (select x.id, row_number() over (order by x.id) - 1 as rn, count(*) over () as n from (${from}) x) y where y.rn = ${k} % y.n)`;

function sets(arena: Arena) {
  const projects = `array[${arena.projects.map((p) => `'${p}'`).join(', ')}]::uuid[]`;
  return {
    templates: `select t.id from template t where t.project_id = any(${projects})`,
    documents: `select d.id from document d join template t on t.id = d.template_id where t.project_id = any(${projects})`,
    versions: `select v.id from document_version v join document d on d.id = v.document_id join template t on t.id = d.template_id where t.project_id = any(${projects})`,
    projects: `select unnest(${projects}) as id`,
  };
}

const literal = (v: number | string | null) => (v === null ? 'null' : typeof v === 'number' ? String(v) : `'${v}'`);

/** The statement(s) of one command: plain SQL, picking its rows among the arena's at run time. */
function statements(c: Command, arena: Arena): string[] {
  const s = sets(arena);
  switch (c.kind) {
    case 'insertVersion':
      return [`insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, sent_at)
        select gen_random_uuid(), now(), now(), d.id,
          ${c.version ?? '(select coalesce(max(v.version), 0) + 1 from document_version v where v.document_id = d.id)'},
          '${c.status}', ${c.subTotal}, ${c.discount}, ${literal(c.sentAt)}
        from document d where d.id = ${nth(s.documents, c.doc)}`];
    case 'updateVersion': {
      const sets_ = [
        c.status && `status = '${c.status}'`, c.subTotal !== null && `sub_total = ${c.subTotal}`,
        c.discount !== null && `discount = ${c.discount}`, c.number !== null && `version = ${c.number}`,
        c.moveTo !== null && `document_id = coalesce(${nth(s.documents, c.moveTo)}, document_id)`,
        c.sentAt !== null && `sent_at = ${literal(c.sentAt)}`,
      ].filter(Boolean);
      if (sets_.length === 0) return [];
      return [`update document_version set ${sets_.join(', ')} where id = ${nth(s.versions, c.version)}`];
    }
    case 'sendVersion':
      return [`update document_version set sent_at = ${literal(c.sentAt)} where id = ${nth(s.versions, c.version)}`];
    case 'deleteVersion':
      return [`delete from document_version where id = ${nth(s.versions, c.version)}`];
    case 'updateVersionsOfDocument':
      return [`update document_version set status = '${c.status}', sub_total = sub_total + 1 where document_id = ${nth(s.documents, c.doc)}`];
    case 'deleteVersionsOfTemplate':
      return [`delete from document_version v using document d where d.id = v.document_id and d.template_id = ${nth(s.templates, c.template)}`];
    case 'insertDocument':
      return [`insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id, intention, dce_downloaded_at)
        select gen_random_uuid(), now(), now(), 'FZ' || substr(md5(random()::text), 1, 15), t.id, '${contractors[c.contractor % contractors.length]}',
          ${literal(c.intention)}, ${c.dce ? 'now()' : 'null'}
        from template t where t.id = ${nth(s.templates, c.template)}`];
    case 'updateDocument': {
      const sets_ = [
        c.intention !== null && `intention = ${literal(c.intention)}`,
        c.dce !== null && `dce_downloaded_at = ${c.dce ? 'now()' : 'null'}`,
        c.contractor !== null && `contractor_id = '${contractors[c.contractor % contractors.length]}'`,
        c.template !== null && `template_id = coalesce(${nth(s.templates, c.template)}, template_id)`,
      ].filter(Boolean);
      if (sets_.length === 0) return [];
      return [`update document set ${sets_.join(', ')} where id = ${nth(s.documents, c.doc)}`];
    }
    case 'deleteDocument':
      return [`delete from document where id = ${nth(s.documents, c.doc)}`];
    case 'budget':
      return [`update template set budget = ${c.budget} where id = ${nth(s.templates, c.template)}`];
    case 'select':
      return [`update template set selected_consultation_id = ${c.doc === null ? 'null' : nth(s.documents, c.doc)} where id = ${nth(s.templates, c.template)}`];
    case 'slice':
      return [`insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, parent_id, is_slice, slice_name, budget)
        select gen_random_uuid(), now(), now(), 'FZ' || substr(md5(random()::text), 1, 15), t.project_id, t.trade_id, t.id, true, 'Tranche', ${c.budget}
        from template t where t.id = ${nth(s.templates, c.template)} and t.parent_id is null
        returning id`];
    case 'deleteTemplate':
      return [`delete from template where id = ${nth(s.templates, c.template)} and parent_id is not null`];
    case 'projectOrganization':
      return [`update project set organization_id = '${c.organization}' where id = ${nth(s.projects, c.project)}`];
    case 'moveTemplate':
      return [`update template set project_id = ${nth(s.projects, c.project)} where id = ${nth(s.templates, c.template)} or parent_id = ${nth(s.templates, c.template)}`];
  }
}

/**
 * Three projects (Atelier Demo, Atelier Nord, Cabinet Sud: not the caller's) of two trades each, templates of
 * 10,000: few templates, so that documents crowd them.
 */
async function newArena(em: EntityManager): Promise<Arena> {
  const rows = await em.getConnection().execute<Array<{ project_id: string; template_id: string }>>(`
    with p as (
      insert into project (id, created_at, updated_at, legacy_id, organization_id, name, construction_type, trade_list_id, response_type)
      select gen_random_uuid(), now(), now(), 'FZ' || substr(md5(random()::text), 1, 15), o, 'Fuzz', 'office', ?, 'DPGF'
      from unnest(array[?]::uuid[]) o returning id
    ),
    pt as (
      insert into project_trade (id, created_at, updated_at, legacy_id, project_id, number, name, short_name)
      select gen_random_uuid(), now(), now(), 'FZ' || substr(md5(random()::text), 1, 15), p.id, '0' || n, 'Lot ' || n, 'L' || n
      from p cross join generate_series(1, 2) n returning id, project_id
    )
    insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, budget)
    select gen_random_uuid(), now(), now(), 'FZ' || substr(md5(random()::text), 1, 15), pt.project_id, pt.id, 10000 from pt
    returning project_id, id as template_id`, [DEMO_IDS.tradeLists.standard, [ORG.atelierDemo, ORG.atelierNord, ORG.cabinetSud]]);
  return { projects: [...new Set(rows.map((r) => r.project_id))], templates: new Set(rows.map((r) => r.template_id)) };
}

/** Writes the initial documents and their versions (numbered from 1) in two statements. */
async function fill(em: EntityManager, arena: Arena, documents: InitialDocument[]): Promise<void> {
  const spec = JSON.stringify(documents.map((d) => ({ ...d, contractor: contractors[d.contractor % contractors.length] })));
  const templates = `select t.id, row_number() over (order by t.id) - 1 as rn, count(*) over () as n
    from template t where t.project_id = any(array[?]::uuid[])`;
  await em.execute(`
    insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id, intention, dce_downloaded_at)
    select gen_random_uuid(), now(), now(), 'FZ' || substr(md5(random()::text), 1, 15), t.id, x.contractor, x.intention,
      case when x.dce then now() end
    from jsonb_to_recordset(?::jsonb) x(template int, contractor uuid, intention text, dce boolean)
    join (${templates}) t on t.rn = x.template % t.n
    on conflict (template_id, contractor_id) do nothing`, [spec, arena.projects]);
  await em.execute(`
    insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, sent_at)
    select gen_random_uuid(), now(), now(), d.id, v.ord, v.status, v.sub_total, v.discount, v.sent_at
    from jsonb_to_recordset(?::jsonb) x(template int, contractor uuid, versions jsonb)
    join (${templates}) t on t.rn = x.template % t.n
    join document d on d.template_id = t.id and d.contractor_id = x.contractor
    cross join lateral rows from (jsonb_to_recordset(x.versions) as (status text, sub_total numeric, discount numeric, sent_at timestamptz))
      with ordinality v(status, sub_total, discount, sent_at, ord)
    on conflict (document_id, version) do nothing`, [spec, arena.projects]);
}

async function run(em: EntityManager, arena: Arena, steps: Array<{ command: Command; rollback: boolean }>): Promise<void> {
  for (const { command: c, rollback } of steps) {
    for (const sql of statements(c, arena)) {
      const exec = async (tx: EntityManager) => {
        const rows = await tx.execute<Array<{ id?: string }>>(sql);
        if (c.kind === 'slice') for (const r of rows) if (r.id) arena.templates.add(r.id);
      };
      try {
        if (rollback) {
          await em.transactional(async (tx) => { await exec(tx); throw new RolledBack(); });
        } else {
          await exec(em);
        }
      } catch (err) {
        // Unique (template, contractor) and (document, version), the one main template per trade: the
        // statement failed as a whole, and the statistics must not show any of it either.
        if (!(err instanceof RolledBack) && (err as { code?: string }).code !== '23505') throw err;
      }
    }
  }
}

class RolledBack extends Error {}

describe('statistics kept at write time', () => {
  it('equal the formulas over the whole histories, after any history of plain SQL writes', async () => {
    const history = fc.record({
      documents: fc.array(initialDocument, { minLength: 2, maxLength: 16 }),
      steps: fc.array(step, { maxLength: 20 }),
    });
    await fc.assert(fc.asyncProperty(history, async ({ documents, steps }) => {
      const em = t.orm.em.fork();
      const arena = await newArena(em);
      await fill(em, arena, documents);
      await run(em, arena, steps);
      const templates = [...arena.templates];
      const service = new StatisticsService({ em, caller: ARCHITECT, config: t.config });
      const [projects, expectedProjects, stats, expectedStats, offers, expectedOffers] = await Promise.all([
        service.projectStatistics(arena.projects),
        oracleProjectStatistics(em.fork(), arena.projects, ARCHITECT.adminOrganizationIds),
        service.templateStats(templates),
        oracleTemplateStats(em.fork(), templates, ARCHITECT.adminOrganizationIds),
        maintainedOfferVersions(em.fork(), arena.projects),
        oracleOfferVersions(em.fork(), arena.projects),
      ]);
      expect(projects).toEqual(expectedProjects);
      expect(stats).toEqual(expectedStats);
      expect(offers).toEqual(expectedOffers);
    }), { numRuns: RUNS, seed: SEED, endOnFailure: true });
  }, Math.max(60_000, RUNS * 400));
});
