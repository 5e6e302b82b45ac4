import { Client } from 'pg';
import { DEMO_IDS } from '../src/seed/demo-data';
import { startAppOn, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request, type HttpResponse } from './support/http';
import { startOwnCluster, type OwnCluster } from './support/own-cluster';
import { expectAnsweredTruthfully, expectServiceUnavailable } from './support/retry-later';
import { queryRows } from './support/databases';

const P = '/api/svc/v1';
const PROJECT = DEMO_IDS.projects.residence;
/** Far above every bound configured below: a request still unanswered then hangs, and fails the test. */
const HANG_MS = 8000;
const PROJECTS_QUERY = '{ projects(first: 5) { totalCount nodes { id name } } }';
const CREATE_TRADE = 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }';

let cluster: OwnCluster;
let dbUrl: string;

beforeAll(async () => {
  cluster = await startOwnCluster('saturation');
  dbUrl = await cluster.createDatabase('tender');
}, 60000);
afterAll(() => cluster?.stop());

/**
 * Holds the project row `for update` from a client of its own, as a stuck transaction would, until
 * released; every trade creation on that project then waits for the lock while holding a pooled connection.
 */
async function lockProject(): Promise<{ waiting(n: number): Promise<void>; release(): Promise<void> }> {
  const client = new Client({ connectionString: dbUrl });
  await client.connect();
  await client.query('begin');
  await client.query('select id from project where id = $1 for update', [PROJECT]);
  return {
    // Until n sessions of the service wait on a lock, i.e. n connections of its pool are tied up.
    async waiting(n) {
      let most = 0;
      for (let i = 0; i < 200; i++) {
        // Statistics views are a snapshot for the whole transaction unless cleared.
        await client.query('select pg_stat_clear_snapshot()');
        const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()`);
        if (rows[0].n >= n) return;
        most = Math.max(most, rows[0].n);
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`fewer than ${n} sessions waiting on the lock (${most} at most)`);
    },
    async release() {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    },
  };
}

/**
 * Opens `n` connections of the app's request pool and leaves them idle, as a running instance's pool is. The pool
 * opens connections on demand, within the acquire bound: from cold, ten opened at once can take longer than the
 * 500 ms below on a loaded machine, and a write that got no connection never ties one up (CI saw 9 of 10 waiting).
 * An acquisition that runs out still leaves its connection to the pool, so trying again finishes the job.
 */
async function warmPool(t: TestApp, n: number): Promise<void> {
  const client = t.orm.em.getKnex().client as { acquireConnection(): Promise<unknown>; releaseConnection(c: unknown): Promise<unknown> };
  for (let attempt = 1; ; attempt++) {
    const held = await Promise.allSettled(Array.from({ length: n }, () => client.acquireConnection()));
    await Promise.all(held.map((h) => (h.status === 'fulfilled' ? client.releaseConnection(h.value) : undefined)));
    if (held.every((h) => h.status === 'fulfilled')) return;
    if (attempt === 10) throw new Error(`the request pool could not open ${n} connections`);
  }
}

const createTrade = (t: TestApp, token: string, name: string) =>
  request(t.url, 'POST', `${P}/projects/${PROJECT}/trades`, { token, body: { name, number: '90', short_name: 'ST' }, timeoutMs: HANG_MS });

async function tradeNames(prefix: string): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(dbUrl, 'select name from project_trade where name like $1 order by name', [`${prefix}%`]);
  return rows.map((r) => r.name);
}

describe('a pool tied up by writes waiting on a locked row', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    // The acquire bound is shorter than the lock bound: queued requests give up before the writes do.
    t = await startAppOn(dbUrl, { DATABASE_ACQUIRE_TIMEOUT_MS: '500', DATABASE_LOCK_TIMEOUT_MS: '3000', DATABASE_STATEMENT_TIMEOUT_MS: '4000' });
    token = await tokenFor(t.url, 'architect@demo.test');
    expect((await request(t.url, 'GET', `${P}/projects`, { token })).status).toBe(200);
    await warmPool(t, 10);
  });
  afterAll(() => t?.close());

  it('answers requests that get no connection within the acquire bound 503 + Retry-After, REST and GraphQL; /readyz still 200', async () => {
    const lock = await lockProject();
    let writes: HttpResponse[];
    let answers: HttpResponse[];
    try {
      const sent = Array.from({ length: 10 }, (_, i) => createTrade(t, token, `satA-${i}`));
      await lock.waiting(10);
      answers = await Promise.all([
        request(t.url, 'GET', `${P}/projects`, { token, timeoutMs: HANG_MS }),
        request(t.url, 'GET', `${P}/projects/${DEMO_IDS.projects.residence}`, { token, timeoutMs: HANG_MS }),
        gql(t.url, token, PROJECTS_QUERY, undefined, { timeoutMs: HANG_MS }),
        request(t.url, 'GET', '/readyz', { timeoutMs: HANG_MS }),
      ]);
      writes = await Promise.all(sent);
    } finally {
      await lock.release();
    }
    const [list, one, graphql, ready] = answers;
    expectServiceUnavailable(list, 'rest');
    expect(list.body.message).toBe('The database is busy, try again shortly');
    expectServiceUnavailable(one, 'rest');
    expectServiceUnavailable(graphql, 'graphql');
    // Readiness has a connection of its own: the database answers, so the instance stays in rotation.
    expect([ready.status, ready.body]).toEqual([200, { status: 'ready' }]);
    // The writes waited for the row longer than the lock bound.
    for (const w of writes) expectServiceUnavailable(w, 'rest');
    expect(await tradeNames('satA-')).toEqual([]);
  });

  it('serves again once the lock is gone: reads 200, a write 201 that is stored', async () => {
    expect((await request(t.url, 'GET', `${P}/projects`, { token, timeoutMs: HANG_MS })).status).toBe(200);
    const created = await createTrade(t, token, 'satA-after');
    expect(created.status).toBe(201);
    expect(await tradeNames('satA-')).toEqual(['satA-after']);
  });
});

describe('requests queued behind writes that give up on a locked row', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    // The lock bound is shorter than the acquire bound: queued requests get the connections the writes free.
    t = await startAppOn(dbUrl, { DATABASE_ACQUIRE_TIMEOUT_MS: '4000', DATABASE_LOCK_TIMEOUT_MS: '1500', DATABASE_STATEMENT_TIMEOUT_MS: '2000' });
    token = await tokenFor(t.url, 'architect@demo.test');
    expect((await request(t.url, 'GET', `${P}/projects`, { token })).status).toBe(200);
  });
  afterAll(() => t?.close());

  it('answers the locked writes 503 + Retry-After (a GraphQL mutation with HTTP 503), and the reads queued behind them 200', async () => {
    const lock = await lockProject();
    let writes: HttpResponse[];
    let mutation: HttpResponse;
    let answers: HttpResponse[];
    try {
      const sent = Array.from({ length: 9 }, (_, i) => createTrade(t, token, `satB-${i}`));
      const sentMutation = gql(t.url, token, CREATE_TRADE, { p: PROJECT, i: { name: 'satB-graphql', number: '91', shortName: 'SG' } }, { timeoutMs: HANG_MS });
      await lock.waiting(10);
      answers = await Promise.all([
        request(t.url, 'GET', `${P}/projects`, { token, timeoutMs: HANG_MS }),
        gql(t.url, token, PROJECTS_QUERY, undefined, { timeoutMs: HANG_MS }),
        request(t.url, 'GET', '/readyz', { timeoutMs: HANG_MS }),
      ]);
      writes = await Promise.all(sent);
      mutation = await sentMutation;
    } finally {
      await lock.release();
    }
    for (const res of [...answers, ...writes, mutation]) expectAnsweredTruthfully(res);
    for (const w of writes) expectServiceUnavailable(w, 'rest');
    expect(writes[0].body.message).toBe('The database is busy, try again shortly');
    // The lock wait ran out inside the resolver: HTTP 503 all the same, not 200 with an error.
    expectServiceUnavailable(mutation, 'graphql');
    expect(mutation.body.data).toBeNull();
    const [list, graphql, ready] = answers;
    expect(list.status).toBe(200);
    expect([graphql.status, graphql.body.errors]).toEqual([200, undefined]);
    expect(ready.status).toBe(200);
    expect(await tradeNames('satB-')).toEqual([]);
  });
});
