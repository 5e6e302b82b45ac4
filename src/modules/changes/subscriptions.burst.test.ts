import { Client } from 'pg';
import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { eventually, subscribe, wsClient, type TestSubscription, type TestWsClient } from '../../../test/support/subscriptions';

// Bursts (issue 12): many answers written in one transaction reach a subscriber as one coalesced update, whose
// payload costs the same few statements whatever the number of answers and of subscribers of one group.

const PRJ = DEMO_IDS.projects.residence;
const TPL = DEMO_IDS.templates.residencePlomberie;
const ORG = DEMO_IDS.organizations.atelierDemo;
const BURST = 500;
const PROJECT_CHANGED = `subscription($ids: [ID!]) { projectChanged(projectIds: $ids) {
  projectId changes documentIds project { id statistics { answered contractors budgets { simulatedCost } }
    templates { id stats { contractorsAnswers } } } } }`;

let t: TestApp;
let token: string;
let documents: string[];
const clients: TestWsClient[] = [];

async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: t.databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** One transaction answering these documents (a new version each), as the contractor portal would. */
const answer = (ids: string[], subTotal: number) => sql(`insert into document_version
  (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
  select gen_random_uuid(), now(), now(), d.id, coalesce((select max(v.version) from document_version v where v.document_id = d.id), 0) + 1,
    'ANSWERED', $2, 0, false, true, now()
  from unnest($1::uuid[]) as d(id)`, [ids, subTotal]);

async function registered(n: number): Promise<void> {
  await eventually(async () => (await t.app.metrics.subscriptionsActive.get()).values.reduce((s, v) => s + v.value, 0) === n, `${n} subscriptions`);
}

beforeAll(async () => {
  t = await startTestApp();
  token = await tokenFor(t.url, 'architect@demo.test');
  // 500 more invited contractors on one template, before anyone subscribes.
  documents = (await sql<{ id: string }>(`
    with c as (
      insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email)
      select gen_random_uuid(), now(), now(), 'BURSTCTR' || lpad(i::text, 9, '0'), $1, 'Entreprise ' || i, 'burst-' || i || '@example.test'
      from generate_series(1, ${BURST}) i returning id
    )
    insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id)
    select gen_random_uuid(), now(), now(), 'BURSTDOC' || lpad((row_number() over ())::text, 9, '0'), $2, c.id from c
    returning id`, [ORG, TPL])).map((r) => r.id);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await t?.close();
});

function subscriber(): TestSubscription<{ projectChanged: { changes: string[]; documentIds: string[]; project: { statistics: { answered: number } } } }> {
  const c = wsClient(t.url, token);
  clients.push(c);
  return subscribe(c.client, PROJECT_CHANGED, { ids: [PRJ] });
}

describe('a burst of answers in one transaction', () => {
  it(`reaches a subscriber as one update (${BURST} answers), with the statements of a burst of 5, and as many for 3 subscribers as for 1`, async () => {
    const first = subscriber();
    await registered(1);

    const five = await t.queries.measure(async () => {
      await answer(documents.slice(0, 5), 100);
      return first.next();
    });
    const all = await t.queries.measure(async () => {
      await answer(documents, 200);
      return first.next();
    });
    // The next change is a control: had the burst been split, its update would not be the third.
    const control = await t.queries.measure(async () => {
      await answer(documents.slice(0, 1), 300);
      return first.next();
    });
    expect(first.results).toEqual([five.result, all.result, control.result]);
    expect(all.result.errors).toBeUndefined();
    expect(five.result.data!.projectChanged.documentIds).toHaveLength(5);
    expect(all.result.data!.projectChanged).toMatchObject({ changes: ['VERSION'], documentIds: expect.arrayContaining(documents) });
    expect(all.result.data!.projectChanged.documentIds).toHaveLength(BURST);
    expect(all.result.data!.projectChanged.project.statistics.answered).toBe(five.result.data!.projectChanged.project.statistics.answered + BURST - 5);
    expect(all.statements).toBe(five.statements);
    expect(control.statements).toBe(five.statements);

    const more = [subscriber(), subscriber()];
    await registered(3);
    const three = await t.queries.measure(async () => {
      await answer(documents, 400);
      return Promise.all([first.next(), ...more.map((s) => s.next())]);
    });
    expect(three.result.map((r) => r.data!.projectChanged.documentIds.length)).toEqual([BURST, BURST, BURST]);
    expect(three.result[1]).toEqual(three.result[0]);
    expect(three.statements).toBe(five.statements);
  });
});
