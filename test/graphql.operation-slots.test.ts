import { Client } from 'pg';
import { DEMO_IDS } from '../src/seed/demo-data';
import { Admission, COST_CLASSES, admitted, type ClassLimits, type CostClass } from '../src/platform/http/admission';
import type { AppMiddleware } from '../src/platform/http/state';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request } from './support/http';
import { queryRows } from './support/databases';
import { expectServiceUnavailable } from './support/retry-later';

const PROJECT = DEMO_IDS.projects.residence;
const CREATE_TRADE = 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id name } } }';
/** Far above every bound configured below: an unanswered request then fails the test instead of hanging it. */
const HANG_MS = 8000;

/**
 * The GraphQL class's turns alone (the other classes unused), as GRAPHQL_MAX_CONCURRENT_OPERATIONS and
 * GRAPHQL_QUEUE_TIMEOUT_MS set them, in arrival order (ADMISSION_LIFO_AFTER_MS's default, 0). With LIFO after
 * 100 ms, a CI machine that stalled that long let the newest run first, and the test, which finishes them in
 * arrival order, waited on one that never got its turn (test/admission.test.ts covers LIFO).
 */
function operationSlots(max: number, queueTimeoutMs: number): AppMiddleware {
  const limits: ClassLimits = { concurrency: max, queue: 64, maxWaitMs: queueTimeoutMs, lifoAfterMs: 0 };
  return admitted(new Admission(Object.fromEntries(COST_CLASSES.map((c) => [c, limits])) as Record<CostClass, ClassLimits>), 'graphql');
}

/** Runs the middleware over a fake request whose work ends when `finish` is called. */
function operation(slots: AppMiddleware, running: { now: number; max: number; order: number[] }, n: number) {
  let finish!: () => void;
  const work = new Promise<void>((resolve) => { finish = resolve; });
  let started!: () => void;
  const begun = new Promise<void>((resolve) => { started = resolve; });
  const done = slots({} as never, async () => {
    running.now++;
    running.max = Math.max(running.max, running.now);
    running.order.push(n);
    started();
    await work;
    running.now--;
  });
  return { finish, begun, done };
}

describe('GraphQL operations run at most GRAPHQL_MAX_CONCURRENT_OPERATIONS at once', () => {
  it('runs no more than the limit at once and the waiting ones in arrival order', async () => {
    const slots = operationSlots(2, 10000);
    const running = { now: 0, max: 0, order: [] as number[] };
    const ops = Array.from({ length: 6 }, (_, i) => operation(slots, running, i));
    await Promise.all([ops[0].begun, ops[1].begun]);
    await new Promise((r) => setTimeout(r, 20));
    expect(running.order).toEqual([0, 1]);
    for (const op of ops) {
      op.finish();
      await op.done;
    }
    expect(running.order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(running.max).toBe(2);
  });

  it('frees the slot of an operation that failed', async () => {
    const slots = operationSlots(1, 200);
    await expect(slots({} as never, async () => { throw new Error('resolver failed'); })).rejects.toThrow('resolver failed');
    const after = jest.fn(async () => undefined);
    await slots({} as never, after);
    expect(after).toHaveBeenCalledTimes(1);
  });
});

// A mutation mostly waits on the database: it takes a turn of the writes' class (`graphql-write`, as many turns as
// REST_MAX_CONCURRENT_WRITES), not one of the queries' (issue 31). These apps have one write turn, held below.
describe('an operation that waits longer than GRAPHQL_QUEUE_TIMEOUT_MS for its turn', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp({
      GRAPHQL_MAX_CONCURRENT_OPERATIONS: '1', REST_MAX_CONCURRENT_WRITES: '1', GRAPHQL_QUEUE_TIMEOUT_MS: '300', DATABASE_LOCK_TIMEOUT_MS: '4000', DATABASE_STATEMENT_TIMEOUT_MS: '5000',
    });
    token = await tokenFor(t.url, 'architect@demo.test');
  });
  afterAll(() => t?.close());

  it('is answered 503 + Retry-After in errors[] while the only write turn is taken; queries and REST reads are not held; the held operation then completes', async () => {
    // The only slot is taken by a mutation waiting on a project row locked by a transaction of our own.
    const client = new Client({ connectionString: t.databaseUrl });
    client.on('error', () => undefined); // ended by the app's close at worst: its queries' rejections say so
    await client.connect();
    await client.query('begin');
    await client.query('select id from project where id = $1 for update', [PROJECT]);
    let released = false;
    try {
      const held = gql(t.url, token, CREATE_TRADE, { p: PROJECT, i: { name: 'Slot holder', number: '92', shortName: 'SH' } }, { timeoutMs: HANG_MS });
      for (let i = 0; i < 200; i++) {
        const { rows } = await client.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid() and datname = current_database()`);
        if (rows[0].n >= 1) break;
        await new Promise((r) => setTimeout(r, 25));
      }

      const started = Date.now();
      const refused = await gql(t.url, token, CREATE_TRADE, { p: DEMO_IDS.projects.school, i: { name: 'Slot refused', number: '95', shortName: 'SR' } }, { timeoutMs: HANG_MS });
      expectServiceUnavailable(refused, 'graphql');
      expect(Date.now() - started).toBeLessThan(HANG_MS / 2);
      // A query takes a turn of its own class: the only query turn is free.
      const query = await gql(t.url, token, '{ me { id } }', undefined, { timeoutMs: HANG_MS });
      expect([query.status, query.body.errors]).toEqual([200, undefined]);
      expect((await request(t.url, 'GET', `/api/svc/v1/projects/${PROJECT}`, { token })).status).toBe(200);

      await client.query('rollback');
      released = true;
      const answer = await held;
      expect({ status: answer.status, errors: answer.body.errors }).toEqual({ status: 200, errors: undefined });
      expect(answer.body.data.createProjectTrade.trade.name).toBe('Slot holder');
      expect((await gql(t.url, token, '{ me { id } }')).status).toBe(200);
    } finally {
      if (!released) await client.query('rollback').catch(() => undefined);
      await client.end();
    }
  });
});

/**
 * Takes the only slot of `t` with a mutation waiting on a project row locked by a transaction of our own;
 * `release()` rolls the transaction back and answers the held mutation.
 */
async function holdTheOnlySlot(t: TestApp, token: string) {
  const client = new Client({ connectionString: t.databaseUrl });
  client.on('error', () => undefined); // ended by the app's close at worst: its queries' rejections say so
  await client.connect();
  await client.query('begin');
  await client.query('select id from project where id = $1 for update', [PROJECT]);
  const held = gql(t.url, token, CREATE_TRADE, { p: PROJECT, i: { name: 'Slot holder', number: '93', shortName: 'SH' } }, { timeoutMs: HANG_MS });
  for (let i = 0; i < 200; i++) {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid() and datname = current_database()`);
    if (rows[0].n >= 1) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      await client.query('rollback').catch(() => undefined);
      await client.end();
      return held;
    },
  };
}

describe('an operation waiting for its turn', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp({
      GRAPHQL_MAX_CONCURRENT_OPERATIONS: '1', REST_MAX_CONCURRENT_WRITES: '1', GRAPHQL_QUEUE_TIMEOUT_MS: '6000', DATABASE_LOCK_TIMEOUT_MS: '5000', DATABASE_STATEMENT_TIMEOUT_MS: '6000',
    });
    token = await tokenFor(t.url, 'architect@demo.test');
  });
  afterAll(() => t?.close());

  it('runs with the rights its caller has when its turn comes, not those it had when it arrived', async () => {
    const [{ organization_id: organization }] = await queryRows<{ organization_id: string }>(t.databaseUrl, 'select organization_id from project where id = $1', [PROJECT]);
    const demote = (role: string) => queryRows(t.databaseUrl,
      `update membership set role = $2 where organization_id = $1 and user_id = (select id from app_user where email = 'architect@demo.test')`, [organization, role]);
    expect((await request(t.url, 'GET', `/api/svc/v1/projects/${PROJECT}`, { token })).status).toBe(200);
    const slot = await holdTheOnlySlot(t, token);
    try {
      const queued = gql(t.url, token, CREATE_TRADE, { p: PROJECT, i: { name: 'Queued with rights', number: '96', shortName: 'QR' } }, { timeoutMs: HANG_MS });
      // Long enough for the queued operation to be through authentication and waiting for the slot.
      await new Promise((r) => setTimeout(r, 300));
      await demote('MEMBER');
      // REST is not held by the slot: once it refuses, this instance has forgotten the caller it kept.
      const deadline = Date.now() + 2000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) status = (await request(t.url, 'GET', `/api/svc/v1/projects/${PROJECT}`, { token })).status;
      expect(status).toBe(404);

      await slot.release();
      const answer = await queued;
      expect({ trade: answer.body.data?.createProjectTrade ?? null, code: answer.body.errors?.[0]?.extensions?.code }).toEqual({ trade: null, code: 'NOT_FOUND' });
      expect(await queryRows(t.databaseUrl, `select id from project_trade where name = 'Queued with rights'`)).toEqual([]);
    } finally {
      await slot.release();
      await demote('ADMINISTRATOR');
    }
  });

  it('logs and counts a request whose client went away while it waited as 499, not as a missing route\'s 404', async () => {
    const lines: Array<{ msg?: string; method?: string; path?: string; status?: number }> = [];
    const logged = await startTestApp({
      GRAPHQL_MAX_CONCURRENT_OPERATIONS: '1', REST_MAX_CONCURRENT_WRITES: '1', GRAPHQL_QUEUE_TIMEOUT_MS: '6000', DATABASE_LOCK_TIMEOUT_MS: '5000', DATABASE_STATEMENT_TIMEOUT_MS: '6000', LOG_LEVEL: 'info',
    }, undefined, { logTo: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    try {
      const architect = await tokenFor(logged.url, 'architect@demo.test');
      const slot = await holdTheOnlySlot(logged, architect);
      try {
        await expect(gql(logged.url, architect, CREATE_TRADE, { p: PROJECT, i: { name: 'Given up', number: '95', shortName: 'GU' } }, { timeoutMs: 300 }))
          .rejects.toThrow();
        await slot.release();
        const after = await gql(logged.url, architect, CREATE_TRADE, { p: DEMO_IDS.projects.school, i: { name: 'After the one given up', number: '98', shortName: 'AG' } }, { timeoutMs: HANG_MS });
        expect(after.status).toBe(200);
      } finally {
        await slot.release();
      }
      const graphqlPosts = lines.filter((l) => l.msg === 'request' && l.method === 'POST' && l.path === '/graphql').map((l) => l.status);
      expect(graphqlPosts.sort()).toEqual([200, 200, 499]);
      const metrics = await (await fetch(`${logged.url}/metrics`)).text();
      expect(metrics).toMatch(/^http_requests_total\{method="POST",route="\/graphql",status="499"\} 1$/m);
      expect(metrics).not.toMatch(/^http_requests_total\{method="POST",route="\/graphql",status="404"\}/m);
    } finally {
      await logged.close();
    }
  });

  it('is not executed when its client went away while it waited', async () => {
    const slot = await holdTheOnlySlot(t, token);
    try {
      // The client gives up while the operation waits behind the held one.
      await expect(gql(t.url, token, CREATE_TRADE, { p: PROJECT, i: { name: 'Abandoned while queued', number: '94', shortName: 'AQ' } }, { timeoutMs: 300 }))
        .rejects.toThrow();
      await slot.release();
      // Turns are taken in arrival order: once a mutation sent after it is answered, the abandoned one had its turn.
      const after = await gql(t.url, token, CREATE_TRADE, { p: DEMO_IDS.projects.school, i: { name: 'After the abandoned', number: '97', shortName: 'AA' } }, { timeoutMs: HANG_MS });
      expect([after.status, after.body.errors]).toEqual([200, undefined]);
      const created = await queryRows(t.databaseUrl, `select id from project_trade where name = 'Abandoned while queued'`);
      expect(created).toEqual([]);
    } finally {
      await slot.release();
    }
  });
});
