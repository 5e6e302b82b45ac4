import { Client } from 'pg';
import { DEMO_IDS } from '../../src/seed/demo-data';
import { queryRows } from './databases';
import { request } from './http';
import { eventually, subscribe, wsClient, type TestSubscription, type TestWsClient } from './subscriptions';

// Changes a subscriber can count (issue 39's tests): documents invited by SQL, each changed in a transaction of its own,
// and subscribers of the demo project whose updates name them.

/** What `projectChanged` answers in these tests. */
export type Changes = { projectChanged: { changes: string[]; documentIds: string[] } };

const PRJ = DEMO_IDS.projects.residence;

/** `n` contractors of Atelier Demo invited by SQL to the demo project's main template: documents whose changes a subscriber names. */
export async function inviteByPlainSql(databaseUrl: string, n: number): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(databaseUrl, `with c as (
      insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email)
      select gen_random_uuid(), now(), now(), substr(md5(random()::text), 1, 17), $1, 'Invited ' || g, 'invited-' || g || '-' || md5(random()::text) || '@changes.test'
      from generate_series(1, $2::int) g returning id)
    insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id)
    select gen_random_uuid(), now(), now(), substr(md5(random()::text), 1, 17), $3, c.id from c returning id`,
  [DEMO_IDS.organizations.atelierDemo, n, DEMO_IDS.templates.residenceGrosOeuvre]);
  return rows.map((r) => r.id);
}

/** Commits a change of each document (a transaction each) at `perSecond`; `after.run()` once `after.at` are committed. */
export async function commitChanges(databaseUrl: string, documents: string[], perSecond: number, after?: { at: number; run(): unknown }): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const [k, id] of documents.entries()) {
      await client.query(`update document set intention = case when intention = 'YES' then 'NO' else 'YES' end where id = $1`, [id]);
      if (after && k + 1 === after.at) await after.run();
      await new Promise((r) => setTimeout(r, 1000 / perSecond));
    }
  } finally {
    await client.end();
  }
}

/** A subscriber of the demo project on `baseUrl`; `clients` collects its connection for disposal. */
export function subscribeToProject(baseUrl: string, token: string, clients: TestWsClient[]): TestSubscription<Changes> {
  const c = wsClient(baseUrl, token);
  clients.push(c);
  return subscribe<Changes>(c.client, 'subscription($ids: [ID!]) { projectChanged(projectIds: $ids) { changes documentIds } }', { ids: [PRJ] });
}

/** Until `baseUrl`'s /metrics counts at least one running projectChanged subscription. */
export function untilSubscribed(baseUrl: string): Promise<boolean> {
  return eventually(async () => /^graphql_subscriptions_active\{subscription="projectChanged"\} [1-9]/m.test((await request(baseUrl, 'GET', '/metrics')).text), `subscribed on ${baseUrl}`);
}

const namedIn = (sub: TestSubscription<Changes>) => new Set(sub.results.flatMap((r) => r.data?.projectChanged.documentIds ?? []));
export const kindsIn = (sub: TestSubscription<Changes>) => sub.results.flatMap((r) => r.data?.projectChanged.changes ?? []);

/** Until every subscription named every document, within `ms`; fails saying how many each missed. */
export async function allNamed(subs: Array<TestSubscription<Changes>>, documents: string[], ms: number): Promise<void> {
  for (const until = Date.now() + ms; ;) {
    const missed = subs.map((s) => documents.filter((d) => !namedIn(s).has(d)).length);
    if (missed.every((m) => m === 0)) return;
    if (Date.now() > until) throw new Error(`documents not named within ${ms} ms, per subscriber: ${missed.join(', ')} of ${documents.length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
