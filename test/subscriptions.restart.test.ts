import { DEMO_IDS } from '../src/seed/demo-data';
import { startAppOn, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { request } from './support/http';
import { startOwnCluster, type OwnCluster } from './support/own-cluster';
import { answerFirstDocumentWithSql } from './support/tender-builder';
import { eventually, subscribe, wsClient, type TestSubscription, type TestWsClient } from './support/subscriptions';

// The change listener across database faults (issue 12): a database of this file's own, killed and restarted
// under a running service with a subscriber connected.

const PRJ = DEMO_IDS.projects.residence;
const PROJECT_CHANGED = `subscription($ids: [ID!]) { projectChanged(projectIds: $ids) {
  projectId changes documentIds project { statistics { answered } } } }`;

let cluster: OwnCluster;
let dbUrl: string;
let t: TestApp;
let token: string;
let ws: TestWsClient;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  cluster = await startOwnCluster('subscriptions');
  dbUrl = await cluster.createDatabase('tender');
  t = await startAppOn(dbUrl, { LOG_LEVEL: 'info', DATABASE_CONNECT_TIMEOUT_MS: '500', READINESS_TIMEOUT_MS: '1000' }, undefined,
    { write: (line) => void logLines.push(JSON.parse(line)) });
  token = await tokenFor(t.url, 'architect@demo.test');
}, 60000);
afterAll(async () => {
  await ws?.dispose();
  await t?.close();
  await cluster?.stop();
});

const hearing = async () => (await t.app.metrics.changeListenerHearing.get()).values[0]?.value === 1;
const logged = (msg: RegExp) => logLines.filter((l) => msg.test(String(l.msg)));

type Update = { projectChanged: { changes: string[]; documentIds: string[]; project: { statistics: { answered: number } } } };

/** The updates up to the first that holds `kind`: told in band meanwhile (INTERRUPTED) is all that may come before it. */
async function until(sub: TestSubscription<Update>, kind: string): Promise<Update['projectChanged']> {
  for (;;) {
    const update = (await sub.next()).data!.projectChanged;
    if (update.changes.includes(kind)) return update;
    expect(update.changes).toEqual(['INTERRUPTED']);
  }
}

describe('the change listener', () => {
  let sub: TestSubscription<Update>;

  it('survives a database restart: says so in the log while down (and /readyz, the database being down), resyncs subscribers, then events flow again', async () => {
    ws = wsClient(t.url, token);
    sub = subscribe<Update>(ws.client, PROJECT_CHANGED, { ids: [PRJ] });
    await eventually(async () => (await t.app.metrics.subscriptionsActive.get()).values.some((v) => v.value === 1), 'subscribed');
    expect(await hearing()).toBe(true);

    await cluster.kill();
    await eventually(async () => !(await hearing()), 'not hearing');
    expect(logged(/^change events: not decoding/).length).toBeGreaterThan(0);
    expect((await request(t.url, 'GET', '/readyz')).status).toBe(503);

    await cluster.restart();
    await eventually(async () => (await request(t.url, 'GET', '/readyz')).status === 200, 'ready again');
    await eventually(hearing, 'hearing again');
    expect(logged(/^change events: hearing again/)).toEqual([expect.objectContaining({ level: 30, down_ms: expect.any(Number) })]);

    // Changes made while it was not decoding are not replayed (its slot went with its connection): the subscriber is
    // told to refetch, with a fresh payload.
    const resync = await until(sub, 'RESYNC');
    expect(resync).toEqual({ projectId: PRJ, changes: ['RESYNC'], documentIds: [], project: { statistics: { answered: expect.any(Number) } } });

    const documentId = await answerFirstDocumentWithSql(dbUrl, PRJ, 500);
    const update = await sub.next();
    expect(update.data!.projectChanged).toMatchObject({ changes: ['VERSION'], documentIds: [documentId] });
    expect(update.data!.projectChanged.project.statistics.answered).toBeGreaterThanOrEqual(resync.project.statistics.answered);
  }, 30000);

  it('reconnects when its own session is ended while the database stays up, staying ready, and resyncs its subscribers (a new slot of its own)', async () => {
    const before = logged(/^change events: hearing again/).length;
    const lost = logged(/^change events: not decoding, the replication connection was lost/).length;
    const [ended] = await queryRows<{ n: number }>(dbUrl,
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = 'tender-bff change decoder'`);
    expect(ended.n).toBe(1);
    await eventually(async () => logged(/^change events: not decoding, the replication connection was lost/).length === lost + 1, 'loss noticed');
    expect((await request(t.url, 'GET', '/readyz')).status).toBe(200);
    await eventually(async () => logged(/^change events: hearing again/).length === before + 1, 'hearing again');
    expect((await until(sub, 'RESYNC')).changes).toEqual(['RESYNC']);
    expect((await request(t.url, 'GET', '/readyz')).status).toBe(200);
  });
});
