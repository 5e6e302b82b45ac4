import { Client } from 'pg';
import { DEMO_IDS } from '../src/seed/demo-data';
import { startAppOn, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request, type HttpResponse } from './support/http';
import { startOwnCluster, type OwnCluster } from './support/own-cluster';
import { expectServiceUnavailable } from './support/retry-later';
import { queryRows } from './support/databases';

const P = '/api/svc/v1';
const PROJECT = DEMO_IDS.projects.residence;
/** Far above every bound configured below: a request still unanswered then hangs, and fails the test. */
const HANG_MS = 10000;
/** The promise: served again within 2 s of the database's return. */
const RECOVERY_MS = 2000;
const PROJECTS_QUERY = '{ projects(first: 5) { totalCount nodes { id name } } }';
const CREATE_TRADE = 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }';
// Short bounds, so that each fault is answered within a few seconds.
const ENV = {
  DATABASE_CONNECT_TIMEOUT_MS: '500',
  DATABASE_ACQUIRE_TIMEOUT_MS: '1000',
  DATABASE_STATEMENT_TIMEOUT_MS: '1000',
  DATABASE_LOCK_TIMEOUT_MS: '500',
  READINESS_TIMEOUT_MS: '500',
};

let cluster: OwnCluster;
let dbUrl: string;
let t: TestApp;
let token: string;

beforeAll(async () => {
  cluster = await startOwnCluster('outage');
  dbUrl = await cluster.createDatabase('tender');
  t = await startAppOn(dbUrl, ENV);
  token = await tokenFor(t.url, 'architect@demo.test');
}, 60000);
afterAll(async () => {
  await t?.close();
  await cluster?.stop();
});

const createTrade = (name: string) =>
  request(t.url, 'POST', `${P}/projects/${PROJECT}/trades`, { token, body: { name, number: '90', short_name: 'OT' }, timeoutMs: HANG_MS });

/** Every kind of request the service answers, each with its expected shape of error. */
const probes = (label: string): Array<[string, 'rest' | 'graphql', Promise<HttpResponse>]> => [
  ['REST read', 'rest', request(t.url, 'GET', `${P}/projects`, { token, timeoutMs: HANG_MS })],
  ['REST write', 'rest', createTrade(`${label}-refused`)],
  ['GraphQL query', 'graphql', gql(t.url, token, PROJECTS_QUERY, undefined, { timeoutMs: HANG_MS })],
  ['GraphQL mutation', 'graphql', gql(t.url, token, CREATE_TRADE, { p: PROJECT, i: { name: `${label}-refused-graphql`, number: '91', shortName: 'OG' } }, { timeoutMs: HANG_MS })],
  ['readiness', 'rest', request(t.url, 'GET', '/readyz', { timeoutMs: HANG_MS })],
];

/** Polls a read until it answers 200; the time it took from now. */
async function servedAgainAfter(): Promise<number> {
  const start = Date.now();
  for (;;) {
    const res = await request(t.url, 'GET', `${P}/projects`, { token, timeoutMs: HANG_MS });
    if (res.status === 200) return Date.now() - start;
    expectServiceUnavailable(res, 'rest');
    if (Date.now() - start > 3 * RECOVERY_MS) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Holds the project row `for update` from a client of its own; a trade creation then waits in the database. */
async function lockProject(): Promise<{ waiting(): Promise<void>; release(): Promise<void> }> {
  const client = new Client({ connectionString: dbUrl });
  client.on('error', () => undefined); // the kill ends this session too
  await client.connect();
  await client.query('begin');
  await client.query('select id from project where id = $1 for update', [PROJECT]);
  return {
    async waiting() {
      for (let i = 0; i < 200; i++) {
        await client.query('select pg_stat_clear_snapshot()');
        const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`);
        if (rows[0].n >= 1) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('no session waiting on the lock');
    },
    async release() {
      await client.query('rollback').catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

async function tradeNames(prefix: string): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(dbUrl, 'select name from project_trade where name like $1 order by name', [`${prefix}%`]);
  return rows.map((r) => r.name);
}

async function expectServedNormally(): Promise<void> {
  expect((await request(t.url, 'GET', `${P}/projects`, { token, timeoutMs: HANG_MS })).status).toBe(200);
  const graphql = await gql(t.url, token, PROJECTS_QUERY, undefined, { timeoutMs: HANG_MS });
  expect([graphql.status, graphql.body.errors]).toEqual([200, undefined]);
  expect((await request(t.url, 'GET', '/readyz', { timeoutMs: HANG_MS })).status).toBe(200);
}

describe('the database killed and restarted', () => {
  it('answers 503 + Retry-After while it is down, serves again within 2 s of its return, keeps every acknowledged write and no refused one', async () => {
    await expectServedNormally();
    const acknowledged = await createTrade('kill-before');
    expect(acknowledged.status).toBe(201);
    // A write in flight when the database dies: it waits on a locked row.
    const lock = await lockProject();
    const inFlight = createTrade('kill-in-flight');
    await lock.waiting();

    await cluster.kill();
    await lock.release();
    const cut = await inFlight;
    const during = await Promise.all(probes('kill').map(async ([what, surface, res]) => [what, surface, await res] as const));

    await cluster.restart();
    const recovery = await servedAgainAfter();

    expectServiceUnavailable(cut, 'rest');
    for (const [, surface, res] of during) expectServiceUnavailable(res, surface);
    expect(recovery).toBeLessThan(RECOVERY_MS);
    await expectServedNormally();
    expect((await createTrade('kill-after')).status).toBe(201);
    expect(await tradeNames('kill-')).toEqual(['kill-after', 'kill-before']);
  }, 30000);
});

describe('the database killed under a load of reads and writes', () => {
  it('answers every request 2xx or 503 + Retry-After, invitations included (a write whose transaction lost its connection too), never a 500', async () => {
    await expectServedNormally();
    const template = DEMO_IDS.templates.residenceGrosOeuvre;
    const answers: HttpResponse[] = [];
    let running = true;
    let n = 0;
    const kinds = [
      () => request(t.url, 'GET', `${P}/projects`, { token, timeoutMs: HANG_MS }),
      () => createTrade(`load-${n++}`),
      () => request(t.url, 'POST', `${P}/projects/${PROJECT}/templates/${template}/contractors`, {
        token, body: { contractors: [{ name: `Load ${n}`, email: `load-${n++}@example.test` }] }, timeoutMs: HANG_MS,
      }),
      () => gql(t.url, token, PROJECTS_QUERY, undefined, { timeoutMs: HANG_MS }),
    ];
    const worker = async (w: number) => {
      for (let i = w; running; i++) answers.push(await kinds[i % kinds.length]());
    };
    const workers = Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    await new Promise((r) => setTimeout(r, 400));
    await cluster.kill();
    await new Promise((r) => setTimeout(r, 800));
    await cluster.restart();
    await new Promise((r) => setTimeout(r, 400));
    running = false;
    await workers;
    await servedAgainAfter();
    expect(answers.length).toBeGreaterThan(40);
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    for (const res of answers) {
      expect(res.status < 300 || res.status === 503 ? 'ok' : `${res.status} ${res.text}`).toBe('ok');
      if (res.status === 503) expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    }
  }, 30000);
});

describe('the database frozen (SIGSTOP) and thawed', () => {
  it('answers 503 + Retry-After within the bounds while it answers nothing, serves again within 2 s of thawing, keeps no refused write', async () => {
    await expectServedNormally();
    expect((await createTrade('freeze-before')).status).toBe(201);
    // Idle connections in the pool: the requests below find a connection whose server no longer answers.
    const warm = await Promise.all(Array.from({ length: 6 }, () => request(t.url, 'GET', `${P}/projects`, { token })));
    expect(warm.map((r) => r.status)).toEqual(Array(6).fill(200));
    const lock = await lockProject();
    const inFlight = createTrade('freeze-in-flight');
    await lock.waiting();

    cluster.freeze();
    let cut: HttpResponse;
    let during: Array<readonly [string, 'rest' | 'graphql', HttpResponse]>;
    try {
      [cut, during] = await Promise.all([
        inFlight,
        Promise.all(probes('freeze').map(async ([what, surface, res]) => [what, surface, await res] as const)),
      ]);
    } finally {
      cluster.thaw();
    }
    // The write that was waiting is let through now: it must not commit, its request was refused.
    await lock.release();
    const recovery = await servedAgainAfter();

    expectServiceUnavailable(cut, 'rest');
    for (const [, surface, res] of during) expectServiceUnavailable(res, surface);
    expect(recovery).toBeLessThan(RECOVERY_MS);
    await expectServedNormally();
    expect((await createTrade('freeze-after')).status).toBe(201);
    // Neither the write that waited on the row nor those refused during the freeze left anything.
    expect(await tradeNames('freeze-')).toEqual(['freeze-after', 'freeze-before']);
  }, 30000);
});
