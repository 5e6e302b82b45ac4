import { Client } from 'pg';
import { datasetStatements } from '../bench/dataset';
import { freshDatabase, startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { gql } from './support/graphql';
import { request } from './support/http';

/**
 * What the database derives (docs/statistics.md, "Derived data"), by the trigger functions that write it. A trigger
 * whose function is in neither list fails the first test: say what it derives (and restore it in
 * derived_data_rebuild, and compare it below) or that it only notifies.
 */
const DERIVING = {
  statistics_on_document_version: 'document_statistics, template_statistics, project_statistics',
  statistics_on_document: 'document_statistics, template_statistics, project_statistics',
  statistics_on_template: 'template_statistics, project_statistics',
  statistics_on_project: 'project_statistics',
  statistics_on_truncate: 'every statistics table (derived_data_rebuild)',
  version_template_of_document: 'document_version.template_id',
  version_template_follow_document: 'document_version.template_id',
} as const;
const NOTIFYING = /^(change_event_.+|caller_change_.+|caller_truncate)$/;
/** Writing the webhook outbox (docs/webhooks.md): events of a change, not a state derived from it; never rebuilt. */
const OUTBOX = /^webhook_event_.+$/;

/** Every derived value, in an order that compares: the tables the triggers keep, and the derived column. */
const DERIVED_STATE = {
  document_statistics: 'select * from document_statistics order by document_id',
  template_statistics: 'select * from template_statistics order by template_id',
  project_statistics: 'select * from project_statistics order by project_id',
  'document_version.template_id': 'select id, template_id from document_version order by id',
};

const USER_TABLES = ['document_version', 'document', 'template', 'project'];

/** One document per bench project moves to another template of its project (the versions must follow). */
const MOVE_DOCUMENTS = `update document d set template_id = m.target
  from (select distinct on (t.project_id) d.id, (select t2.id from template t2 where t2.project_id = t.project_id and t2.id <> t.id
          and not exists (select 1 from document x where x.template_id = t2.id and x.contractor_id = d.contractor_id)
          order by t2.legacy_id limit 1) as target
        from document d join template t on t.id = d.template_id
        where d.legacy_id like 'BENCHDOC%' order by t.project_id, d.legacy_id) m
  where m.id = d.id and m.target is not null`;

async function run(url: string, statements: string[]): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
}

async function derivedState(url: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [name, sql] of Object.entries(DERIVED_STATE)) out[name] = await queryRows(url, sql);
  return out;
}

describe('derived data', () => {
  it('has every trigger classified: deriving (and then always firing), only notifying, or writing the webhook outbox', async () => {
    const db = await freshDatabase('derived');
    try {
      const triggers = await queryRows<{ table: string; name: string; fn: string; enabled: string }>(db.url, `
        select c.relname as table, t.tgname as name, p.proname as fn, t.tgenabled as enabled
        from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_proc p on p.oid = t.tgfoid
        where not t.tgisinternal order by c.relname, t.tgname`);
      expect(triggers.length).toBeGreaterThan(20);
      const unclassified = triggers.filter((t) => !(t.fn in DERIVING) && !NOTIFYING.test(t.fn) && !OUTBOX.test(t.fn));
      expect(unclassified).toEqual([]);
      // Deriving triggers fire whoever writes, session_replication_role = replica included.
      const notAlways = triggers.filter((t) => t.fn in DERIVING && t.enabled !== 'A');
      expect(notAlways).toEqual([]);
      // The outbox keeps PostgreSQL's default: a restore or a logical replica's apply replays no event to integrations.
      expect(triggers.filter((t) => OUTBOX.test(t.fn) && t.enabled !== 'O')).toEqual([]);
    } finally {
      await db.drop();
    }
  });

  it('refuses a version without its template when the deriving trigger is bypassed, instead of hiding it from dashboards', async () => {
    const db = await freshDatabase('derived');
    try {
      const [doc] = await queryRows<{ id: string }>(db.url, 'select id from document order by id limit 1');
      await expect(run(db.url, [
        'begin',
        'alter table document_version disable trigger user',
        `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount)
         values (gen_random_uuid(), now(), now(), '${doc.id}', 99, 'DRAFT', 1, 0)`,
      ])).rejects.toMatchObject({ code: '23514', constraint: 'document_version_template_id_check' });
    } finally {
      await db.drop();
    }
  });

  describe('derived_data_rebuild()', () => {
    let withTriggers: TestApp;
    let rebuilt: TestApp;
    beforeAll(async () => {
      const load = datasetStatements({ projects: 3 }).filter((sql) => !/statistics_rebuild/.test(sql));
      const on = await freshDatabase('derived_on');
      await run(on.url, [...load, MOVE_DOCUMENTS]);
      const off = await freshDatabase('derived_off');
      // The same rows written with every trigger of the sources off: nothing derived follows them.
      await run(off.url, [
        ...USER_TABLES.map((t) => `alter table "${t}" disable trigger user`),
        ...load, MOVE_DOCUMENTS,
        ...USER_TABLES.map((t) => `alter table "${t}" enable trigger user`),
      ]);
      expect(await derivedState(off.url)).not.toEqual(await derivedState(on.url));
      await run(off.url, ['select derived_data_rebuild()']);
      withTriggers = await startTestApp({}, undefined, { database: on.url });
      rebuilt = await startTestApp({}, undefined, { database: off.url });
      // Dropped with the apps' close: the databases are the test's own.
      const closeOn = withTriggers.close;
      withTriggers.close = async () => { await closeOn(); await on.drop(); };
      const closeOff = rebuilt.close;
      rebuilt.close = async () => { await closeOff(); await off.drop(); };
    }, 60000);
    afterAll(async () => {
      await rebuilt?.close();
      await withTriggers?.close();
    });

    it('restores every derived table and column as the triggers would have written them', async () => {
      expect(await derivedState(rebuilt.databaseUrl)).toEqual(await derivedState(withTriggers.databaseUrl));
    });

    it('gives the same REST and GraphQL answers as a load with the triggers on', async () => {
      const projects = await queryRows<{ id: string }>(withTriggers.databaseUrl, `select id from project where legacy_id like 'BENCHPRJ%' order by legacy_id`);
      expect(projects.length).toBe(3);
      const DASHBOARD = `query($ids: [ID!]!) { projectsStatistics(ids: $ids) { id answered mayAnswer declined contractors tenderDocuments
        budgets { total simulatedCost totalAnticipatedTrades totalAnticipatedOffers budgetTradesToAssign { value percent } projectDeviation { value percent } } }
        projects { nodes { id templates { id stats { contractors contractorsAnswers deltaBudget } documents { id versions { id version status subTotal } } } } } }`;
      const ids = projects.map((p) => p.id);
      const answers = async (app: TestApp) => {
        // Each database signs with keys of its own: a token per app.
        const token = await tokenFor(app.url, 'architect@demo.test');
        const graphql = await gql(app.url, token, DASHBOARD, { ids });
        expect(graphql.body.errors).toBeUndefined();
        const rest = [];
        for (const id of ids) {
          rest.push((await request(app.url, 'GET', `/api/svc/v1/projects/${id}/statistics`, { token })).body);
          rest.push((await request(app.url, 'GET', `/api/svc/v1/projects/${id}/templates`, { token })).body);
        }
        return { graphql: graphql.body.data, rest };
      };
      const expected = await answers(withTriggers);
      // The moved documents' versions are under their new template in both.
      expect(JSON.stringify(expected.graphql)).toMatch(/"versions":\[\{"id"/);
      expect(await answers(rebuilt)).toEqual(expected);
    });
  });
});
