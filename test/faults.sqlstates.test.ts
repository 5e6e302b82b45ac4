import { Client } from 'pg';
import { withDatabase } from '../src/platform/database/admin';
import { DEMO_IDS, DEMO_USERS } from '../src/seed/demo-data';
import { startAppOn, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { gql } from './support/graphql';
import { request, type HttpResponse } from './support/http';
import { replicaMissing, startReplicatedCluster, type ReplicatedCluster } from './support/replica-cluster';
import { expectServiceUnavailable } from './support/retry-later';
import { CREATE_TRADE, FAULT_ENV, sleep } from './support/failover-load';
import { eventually } from './support/subscriptions';
import { startSwitchableProxy, type SwitchableProxy } from './support/switchable-proxy';

/**
 * The error mapping per SQLSTATE, each fault produced for real (issue 33, docs/faults.md "What answers 503"): a write
 * that meets a server that cannot take it answers 503 + Retry-After in its endpoint's shape, never a 500. A primary
 * and a streaming replica of this file's own; the service reaches "the primary" through a TCP proxy whose target the
 * test switches (to the hot standby, to a standby that accepts no connections) and whose connections it can cut.
 *
 * Produced for real: 25006 (default_transaction_read_only; a hot standby), 57P01 (pg_terminate_backend of the
 * request's session while it waits on a lock), 57P03 (a standby with hot_standby = off: "the database system is not
 * accepting connections"; a server in crash recovery: "the database system is in recovery mode"), a connection cut
 * mid-transaction (the proxy resets it while the write waits on a lock). 57P02 (crash_shutdown) cannot reach a client as
 * an error: since PostgreSQL 14 a backend told to quit because another one crashed sends it as a WARNING
 * (WARNING_CLIENT_ONLY, "terminating connection because of crash of another server process") and closes the
 * connection, so the service sees the connection end; that is what is produced here (SIGKILL of another backend).
 */

const PRJ = DEMO_IDS.projects.residence;
const ENV = {
  ...FAULT_ENV,
  DATABASE_ACQUIRE_TIMEOUT_MS: '3000',
  DATABASE_LOCK_TIMEOUT_MS: '4000',
};

const missing = replicaMissing();
const describeWithReplica = missing ? describe.skip : describe;
if (missing) console.warn(`faults.sqlstates: skipped: ${missing}`);

let cluster: ReplicatedCluster;
let proxy: SwitchableProxy;
let primaryDb: string;
let t: TestApp;
let token: string;
const logLines: Array<Record<string, unknown>> = [];
let n = 0;

const restWrite = (name: string) => request(t.url, 'POST', `/api/svc/v1/projects/${PRJ}/trades`, { token, body: { name, number: '57', short_name: 'SQ' }, timeoutMs: 15000 });
const graphqlWrite = (name: string) => gql(t.url, token, CREATE_TRADE, { p: PRJ, i: { name, number: '58', shortName: 'SG' } }, { timeoutMs: 15000 });
const restRead = () => request(t.url, 'GET', `/api/svc/v1/projects/${PRJ}/trades`, { token, timeoutMs: 15000 });
const graphqlRead = () => gql(t.url, token, '{ projects(first: 3) { nodes { id } } }', undefined, { timeoutMs: 15000 });

/** The service's log from line `from` on, as text: what PostgreSQL or the driver said (the errors' messages and causes). */
const loggedSince = (from: number) => JSON.stringify(logLines.slice(from));

/** One statement on the primary itself (not through the proxy), on its `tender` database. */
async function onPrimary(sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  return queryRows(primaryDb, sql, params);
}

/** One statement on the primary's `postgres` database: `tender` may be read-only by default meanwhile. */
const asAdmin = (sql: string) => queryRows(`${cluster.primaryUrl}/postgres`, sql);

/** Ends the service's sessions on the primary's `tender` database: they reconnect with the database's new defaults. */
const endSessions = () => asAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = 'tender' and pid <> pg_backend_pid()
  and backend_type = 'client backend'`);

/** Waits until the service writes again (the fault's aftermath over), so that cases do not leak into each other. */
async function writesAgain(): Promise<void> {
  await eventually(async () => (await restWrite(`sq-recovered-${++n}`)).status === 201, 'a write succeeds again');
}

/** The project's row held `for update` by a transaction of its own on the primary: a trade creation waits on it. */
async function lockedProject(): Promise<{ pid: number; waiting(count?: number): Promise<number[]>; release(): Promise<void> }> {
  const holder = new Client({ connectionString: primaryDb });
  holder.on('error', () => undefined);
  await holder.connect();
  const { rows: [{ pid }] } = await holder.query<{ pid: number }>('select pg_backend_pid() as pid');
  await holder.query('begin');
  await holder.query('select id from project where id = $1 for update', [PRJ]);
  let released: Promise<void> | null = null;
  return {
    pid,
    /** The sessions waiting on a lock, once there are `count`. */
    async waiting(count = 1) {
      let pids: number[] = [];
      await eventually(async () => {
        pids = (await onPrimary(`select pid from pg_stat_activity where datname = 'tender' and wait_event_type = 'Lock'`)).map((r) => Number(r.pid));
        return pids.length >= count;
      }, `${count} session(s) waiting on the project's row`);
      return pids;
    },
    release() {
      released ??= holder.query('rollback').then(() => undefined, () => undefined).then(() => holder.end().catch(() => undefined));
      return released;
    },
  };
}

describeWithReplica('the error mapping per SQLSTATE, each fault real', () => {
  beforeAll(async () => {
    cluster = await startReplicatedCluster('sqlstates', 0);
    primaryDb = await cluster.createDatabase('tender');
    proxy = await startSwitchableProxy(cluster.primaryUrl);
    t = await startAppOn(withDatabase(proxy.url, 'tender'), ENV, undefined, { write: (line) => void logLines.push(JSON.parse(line)) });
    token = await tokenFor(t.url, DEMO_USERS.architect);
    await eventually(async () => (await queryRows<{ n: number }>(withDatabase(cluster.replicaUrl, 'tender'), 'select count(*)::int as n from project')
      .catch(() => [{ n: 0 }]))[0].n > 0, 'the replica has the database');
  }, 60000);
  // Stopping the service, the proxy and the two clusters after the crash tests took over jest's default 30 s once on a
  // loaded CI machine (Node 24): the hook timed out and left the service's timers to fire after the teardown.
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await cluster?.stop();
  }, 90000);

  it('25006 read_only_sql_transaction (default_transaction_read_only on the database): REST and GraphQL writes 503 + Retry-After, reads 200', async () => {
    const from = logLines.length;
    await asAdmin('alter database tender set default_transaction_read_only = on');
    let answers: HttpResponse[];
    try {
      await endSessions();
      await sleep(200);
      // Reads first: the pool's connections made again, now read-only.
      const reads = [await restRead(), await graphqlRead()];
      answers = [await restWrite('sq-25006-rest'), await graphqlWrite('sq-25006-graphql')];
      expect(reads.map((r) => r.status)).toEqual([200, 200]);
    } finally {
      await asAdmin('alter database tender reset default_transaction_read_only');
      await endSessions();
    }
    expect(loggedSince(from)).toMatch(/cannot execute INSERT in a read-only transaction/);
    expectServiceUnavailable(answers[0], 'rest');
    expectServiceUnavailable(answers[1], 'graphql');
    await writesAgain();
  }, 30000);

  it('25006 read_only_sql_transaction (the address switched to a hot standby): REST and GraphQL writes 503 + Retry-After', async () => {
    const from = logLines.length;
    proxy.switchTo(cluster.replicaUrl, { cut: true });
    let answers: HttpResponse[];
    try {
      const reads = [await restRead(), await graphqlRead()];
      answers = [await restWrite('sq-standby-rest'), await graphqlWrite('sq-standby-graphql')];
      console.log(`writes on a hot standby: REST ${answers[0].status}, GraphQL ${answers[1].status}; reads ${reads.map((r) => r.status)}`);
    } finally {
      proxy.switchTo(cluster.primaryUrl, { cut: true });
    }
    expect(loggedSince(from)).toMatch(/cannot execute INSERT in a read-only transaction/);
    expectServiceUnavailable(answers[0], 'rest');
    expectServiceUnavailable(answers[1], 'graphql');
    await writesAgain();
  }, 30000);

  it('57P01 admin_shutdown (pg_terminate_backend of the request\'s session while it waits on a lock): REST and GraphQL writes 503 + Retry-After', async () => {
    const from = logLines.length;
    const answers: HttpResponse[] = [];
    for (const write of [() => restWrite('sq-57p01-rest'), () => graphqlWrite('sq-57p01-graphql')]) {
      const lock = await lockedProject();
      try {
        const pending = write();
        const pids = await lock.waiting();
        await onPrimary('select pg_terminate_backend(pid) from unnest($1::int[]) pid', [pids]);
        answers.push(await pending);
      } finally {
        await lock.release();
      }
    }
    expect(loggedSince(from)).toMatch(/terminating connection due to administrator command/);
    expectServiceUnavailable(answers[0], 'rest');
    expectServiceUnavailable(answers[1], 'graphql');
    expect(await onPrimary(`select 1 from project_trade where name like 'sq-57p01%'`)).toEqual([]);
    await writesAgain();
  }, 30000);

  it('57P02 crash_shutdown (another backend killed: the request\'s session ends) and 57P03 during crash recovery: 503 + Retry-After', async () => {
    const from = logLines.length;
    const lock = await lockedProject();
    const pending = [restWrite('sq-57p02-rest'), graphqlWrite('sq-57p02-graphql')];
    await lock.waiting(2);
    // SIGKILL of a backend (the lock's holder): the postmaster ends every other one (SIGQUIT: 57P02 to their clients) and recovers.
    process.kill(lock.pid, 'SIGKILL');
    const cut = await Promise.all(pending);
    // At once, during the crash recovery: new connections are refused (57P03 "the database system is in recovery mode").
    const during = [await restWrite('sq-57p03-recovery-rest'), await graphqlWrite('sq-57p03-recovery-graphql'), await restRead(), await graphqlRead()];
    await lock.release();
    console.log(`crash of another backend: ${cut.map((r) => r.status)}; just after: ${during.map((r) => r.status)}; log: ${
      [...new Set(loggedSince(from).match(/crash of another server process|in recovery mode|not yet accepting connections|Connection terminated[a-z ]*|ECONNREFUSED/g) ?? [])]}`);
    expectServiceUnavailable(cut[0], 'rest');
    expectServiceUnavailable(cut[1], 'graphql');
    for (const [i, res] of during.entries()) if (res.status !== 200 && res.status !== 201) expectServiceUnavailable(res, i % 2 ? 'graphql' : 'rest');
    await writesAgain();
    expect(await onPrimary(`select 1 from project_trade where name like 'sq-57p02%'`)).toEqual([]);
  }, 40000);

  it('57P03 cannot_connect_now (the address switched to a standby with hot_standby = off): REST and GraphQL, reads and writes, 503 + Retry-After', async () => {
    const from = logLines.length;
    await cluster.stopReplica();
    await cluster.startReplica(['hot_standby=off']);
    proxy.switchTo(cluster.replicaUrl, { cut: true });
    let answers: HttpResponse[];
    try {
      answers = [await restWrite('sq-57p03-rest'), await graphqlWrite('sq-57p03-graphql'), await restRead(), await graphqlRead()];
    } finally {
      proxy.switchTo(cluster.primaryUrl, { cut: true });
      await cluster.stopReplica();
      await cluster.startReplica();
    }
    expect(loggedSince(from)).toMatch(/the database system is not accepting connections|Hot standby mode is disabled/);
    for (const [i, res] of answers.entries()) expectServiceUnavailable(res, i % 2 ? 'graphql' : 'rest');
    await writesAgain();
  }, 40000);

  it('a connection cut mid-transaction (the proxy resets it while the write waits on a lock): REST and GraphQL 503 + Retry-After, nothing stored', async () => {
    const answers: HttpResponse[] = [];
    for (const write of [() => restWrite('sq-cut-rest'), () => graphqlWrite('sq-cut-graphql')]) {
      const lock = await lockedProject();
      try {
        const pending = write();
        await lock.waiting();
        proxy.cutAll();
        answers.push(await pending);
      } finally {
        await lock.release();
      }
    }
    expectServiceUnavailable(answers[0], 'rest');
    expectServiceUnavailable(answers[1], 'graphql');
    await writesAgain();
    await sleep(500);
    expect(await onPrimary(`select 1 from project_trade where name like 'sq-cut%'`)).toEqual([]);
  }, 30000);
});
