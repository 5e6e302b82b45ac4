import { Client } from 'pg';
import { adminQuery, withDatabase } from '../src/platform/database/admin';
import { DEMO_IDS, DEMO_USERS } from '../src/seed/demo-data';
import { startAppOn, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { MACHINE_REDIS_URL, busKeys } from './support/bus';
import { queryRows } from './support/databases';
import { request } from './support/http';
import { startOwnCluster, type OwnCluster } from './support/own-cluster';
import { eventually, subscribe, wsClient, type TestSubscription, type TestWsClient } from './support/subscriptions';

/**
 * A transaction left open anywhere on the server (issue 39): making a logical slot waits for every transaction that
 * held a transaction id when it began, in every database. Here one stays open for 60 s in another database of a cluster
 * of this file's own (max_wal_senders = max_replication_slots = 4), while, side by side on databases of their own:
 *
 * - `early`: a fleet with the bus whose slot exists; its decoder's connection is cut (a network blip, a restart);
 * - `late`: a fleet with the bus starting now, whose slot must be made;
 * - `own`: an instance without a bus (its own temporary slot), whose connection is cut.
 *
 * None may stack WAL senders on the server, every instance stays ready and serves reads, and what is written meanwhile
 * reaches its subscriber once decoding resumes: at once where the slot exists, by RESYNC where it had to be made.
 */

const OPEN_MS = 60_000;
const PRJ = DEMO_IDS.projects.residence;
const bus = busKeys('long');
const BUS = { CHANGE_BUS_URL: MACHINE_REDIS_URL, CHANGE_BUS_KEY_PREFIX: bus.prefix };
const FAST = { LOG_LEVEL: 'info', DATABASE_CONNECT_TIMEOUT_MS: '1000', LISTENER_HEARTBEAT_INTERVAL_MS: '1000', LISTENER_HEARTBEAT_TIMEOUT_MS: '1000' };

type Changes = { projectChanged: { changes: string[]; documentIds: string[] } };

let cluster: OwnCluster;
const urls: Record<string, string> = {};
const apps: Record<string, TestApp> = {};
const logs: Record<string, Array<Record<string, unknown>>> = {};
const clients: TestWsClient[] = [];
let holder: Client;
let holderPid: number;

async function start(name: string, database: string, env: Record<string, string>): Promise<TestApp> {
  logs[name] = [];
  apps[name] = await startAppOn(urls[database], { ...FAST, ...env }, undefined, { write: (line) => void logs[name].push(JSON.parse(line)) });
  return apps[name];
}

async function subscribeTo(app: TestApp): Promise<TestSubscription<Changes>> {
  const token = await tokenFor(app.url, DEMO_USERS.architect);
  const c = wsClient(app.url, token);
  clients.push(c);
  const sub = subscribe<Changes>(c.client, 'subscription($ids: [ID!]) { projectChanged(projectIds: $ids) { changes documentIds } }', { ids: [PRJ] });
  await eventually(async () => (await app.app.metrics.subscriptionsActive.get()).values.some((v) => v.value > 0), 'subscribed');
  return sub;
}

/** A contractor's intention set by SQL on the project's first document: a DOCUMENT change naming it. */
async function changeADocument(database: string): Promise<string> {
  const [row] = await queryRows<{ id: string }>(urls[database], `update document set intention = case when intention = 'YES' then 'NO' else 'YES' end
    where id = (select d.id from document d join template t on t.id = d.template_id where t.project_id = $1 order by d.id limit 1) returning id`, [PRJ]);
  return row.id;
}

const endDecoder = (database: string) => queryRows(urls[database], `select pg_terminate_backend(pid) from pg_stat_activity
  where backend_type = 'walsender' and datname = current_database() and application_name like 'tender-bff change decoder%'`);

const kinds = (sub: TestSubscription<Changes>) => sub.results.flatMap((r) => r.data?.projectChanged.changes ?? []);
const named = (sub: TestSubscription<Changes>) => sub.results.flatMap((r) => r.data?.projectChanged.documentIds ?? []);

/** The most WAL senders each database had at once, sampled every 100 ms while `during` runs. */
async function sendersWhile<T>(during: () => Promise<T>): Promise<{ result: T; most: Record<string, number> }> {
  const most: Record<string, number> = {};
  let going = true;
  const sampler = new Client({ connectionString: withDatabase(cluster.serverUrl, 'postgres') });
  await sampler.connect();
  const sampling = (async () => {
    while (going) {
      const { rows } = await sampler.query<{ datname: string; n: number }>(`select datname, count(*)::int as n from pg_stat_activity
        where backend_type = 'walsender' group by datname`);
      for (const r of rows) most[r.datname] = Math.max(most[r.datname] ?? 0, r.n);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    return { result: await during(), most };
  } finally {
    going = false;
    await sampling;
    await sampler.end();
  }
}

beforeAll(async () => {
  cluster = await startOwnCluster('long-transaction', ['max_wal_senders=4', 'max_replication_slots=4']);
  for (const name of ['early', 'late', 'own']) urls[name] = await cluster.createDatabase(name);
  await adminQuery(cluster.serverUrl, 'drop database if exists other');
  await adminQuery(cluster.serverUrl, 'create database other');
  urls.other = withDatabase(cluster.serverUrl, 'other');
  await queryRows(urls.other, 'create table batch (n int)');
  await start('early', 'early', BUS);
  await start('own', 'own', {});
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await holder?.end().catch(() => undefined);
  for (const app of Object.values(apps)) await app.close();
  await cluster?.stop();
  await bus.drop();
}, 60_000);

describe(`a transaction holding a transaction id open for ${OPEN_MS / 1000} s in another database`, () => {
  const seen: Record<string, TestSubscription<Changes>> = {};
  const written: Record<string, string> = {};
  const during: Record<string, { readyz: number[]; reads: number[] }> = {};
  let most: Record<string, number> = {};
  let earlyGotItMs = -1;
  const stoppedHolder = { gone: false, takenOver: false };

  beforeAll(async () => {
    seen.early = await subscribeTo(apps.early);
    seen.own = await subscribeTo(apps.own);
    holder = new Client({ connectionString: urls.other });
    await holder.connect();
    holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
    await holder.query('begin');
    // A write: its transaction id is in the WAL, so decoding keeps the WAL it needs too (a batch import).
    await holder.query('insert into batch values (1)');
    const openedAt = Date.now();
    ({ most } = await sendersWhile(async () => {
      // The `late` fleet starts now: two instances, its slot to be made. The first holds the lease and waits.
      await start('late-a', 'late', BUS);
      await eventually(async () => apps['late-a'].app && (await request(apps['late-a'].url, 'GET', '/healthz')).body.changes.decoder === 'making the slot', 'late-a makes the slot');
      const [waiting] = await queryRows<{ pid: number }>(urls.late, `select pid from pg_stat_activity where backend_type = 'walsender' and datname = 'late'`);
      await start('late-b', 'late', BUS);
      seen.late = await subscribeTo(apps['late-b']);
      written.late = await changeADocument('late');
      // The holder stops while its slot waits: its WAL sender is ended on the server, and the other instance waits instead.
      await apps['late-a'].close();
      delete apps['late-a'];
      stoppedHolder.gone = await eventually(async () => (await queryRows(urls.late, 'select 1 from pg_stat_activity where pid = $1', [waiting.pid])).length === 0, 'its WAL sender ended');
      await eventually(async () => (await request(apps['late-b'].url, 'GET', '/healthz')).body.changes.decoder === 'making the slot', 'late-b makes the slot');
      stoppedHolder.takenOver = true;
      // `early`'s decoder loses its connection; its slot exists: it streams again at once.
      await endDecoder('early');
      const cut = Date.now();
      written.early = await changeADocument('early');
      await eventually(async () => named(seen.early).includes(written.early), 'early: the change written meanwhile');
      earlyGotItMs = Date.now() - cut;
      // `own` loses its connection: a temporary slot of its own must be made again, and waits.
      await endDecoder('own');
      written.own = await changeADocument('own');
      // Every instance ready and serving reads, sampled while the transaction stays open.
      const tokens: Record<string, string> = {};
      for (const [name, app] of Object.entries(apps)) {
        during[name] = { readyz: [], reads: [] };
        tokens[name] = await tokenFor(app.url, DEMO_USERS.architect);
      }
      while (Date.now() - openedAt < OPEN_MS) {
        for (const [name, app] of Object.entries(apps)) {
          during[name].readyz.push((await request(app.url, 'GET', '/readyz', { timeoutMs: 5000 })).status);
          during[name].reads.push((await request(app.url, 'GET', `/api/svc/v1/projects/${PRJ}`, { token: tokens[name], timeoutMs: 5000 })).status);
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
      await holder.query('commit');
      // Decoding resumes everywhere: what could not be decoded meanwhile comes as RESYNC.
      await eventually(async () => kinds(seen.late).includes('RESYNC') && kinds(seen.own).includes('RESYNC'), 'RESYNC once the slots are made');
    }));
    console.log(`a transaction open ${OPEN_MS / 1000} s in another database: most WAL senders at once per database ${JSON.stringify(most)}; `
      + `/readyz and reads sampled ${during['late-b']?.readyz.length} times on each of ${Object.keys(during).length} instances: `
      + `${JSON.stringify(Object.fromEntries(Object.entries(during).map(([n, d]) => [n, [...new Set([...d.readyz, ...d.reads])]])))}; `
      + `the change written while early's decoder reconnected heard ${earlyGotItMs} ms after the cut`);
  }, OPEN_MS + 90_000);

  it('never has more than one WAL sender of the service per database: a wait given up is not left to stack up', () => {
    expect(most).toMatchObject({ early: 1, late: 1, own: 1 });
  });

  it('ends on the server the wait of an instance that stops while its slot is being made, and another instance waits instead', () => {
    expect(stoppedHolder).toEqual({ gone: true, takenOver: true });
  });

  it('keeps every instance ready (/readyz 200) and serving reads all along', () => {
    for (const [name, d] of Object.entries(during)) {
      expect({ name, readyz: [...new Set(d.readyz)], reads: [...new Set(d.reads)] }).toEqual({ name, readyz: [200], reads: [200] });
      expect(d.readyz.length).toBeGreaterThan(3);
    }
  });

  it('a decoder reconnection resumes its slot at once: the change written meanwhile reaches its subscriber, no RESYNC', () => {
    expect(earlyGotItMs).toBeGreaterThanOrEqual(0);
    expect(earlyGotItMs).toBeLessThan(10_000);
    expect(kinds(seen.early)).not.toContain('RESYNC');
  });

  it('an instance started while its slot cannot be made hears nothing yet: its subscriber is told in band (INTERRUPTED), then RESYNC once the slot is made', () => {
    expect(kinds(seen.late)[0]).toBe('INTERRUPTED');
    expect(kinds(seen.late)).toContain('RESYNC');
    expect((logs['late-b'] ?? []).some((l) => /^change events: not heard yet/.test(String(l.msg)))).toBe(true);
  });

  it('without a bus, a reconnection must make a new temporary slot: it waits, then RESYNC', () => {
    expect(kinds(seen.own)).toContain('RESYNC');
  });

  it('says in the log what the slot waits for: the transaction\'s process, database and age', () => {
    const waits = [...logs['late-a'], ...logs['late-b'], ...logs.own].filter((l) => /^change events: making the slot waits for a transaction/.test(String(l.msg)));
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]).toMatchObject({ blocking_pid: holderPid, blocking_database: 'other', blocking_open_ms: expect.any(Number) });
  });

  it('makes the slots once the transaction ended: one permanent slot per fleet, the one of the instance without a bus temporary', async () => {
    const slots = await queryRows<{ database: string; temporary: boolean; active: boolean }>(urls.other,
      'select database, temporary, active from pg_replication_slots order by database');
    expect(slots).toEqual([
      { database: 'early', temporary: false, active: true },
      { database: 'late', temporary: false, active: true },
      { database: 'own', temporary: true, active: true },
    ]);
  });
});
