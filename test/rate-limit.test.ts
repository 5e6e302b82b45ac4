import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { loadConfig } from '../src/platform/config';
import { TooManyRequestsError } from '../src/platform/errors/errors';
import { createLogger } from '../src/platform/logger';
import { createRateLimiters } from '../src/platform/http/rate-limiters';
import { DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { LoginThrottle } from '../src/modules/identity/login-throttle';
import { startTestApp, type TestApp } from './support/app';
import { tokenRequest } from './support/auth';
import { request, type HttpResponse } from './support/http';
import { freePort } from './support/ports';

// docs/rate-limits.md: quotas per caller on the API, per address on /auth/token, sign-in lockouts.

const REST = '/api/svc/v1/organizations';
const ME = '{ me { email } }';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const form = (username: string, password: string) => ({ grant_type: 'password', client_id: 'svc-api', username, password, scope: 'svc email profile' });
/** A password grant from `address` (apps here trust X-Forwarded-For, so each test picks its own client). */
const signIn = (t: TestApp, username: string, password: string, address: string) =>
  tokenRequest(t.url, form(username, password), { 'X-Forwarded-For': address });
const tokenAt = async (t: TestApp, username: string, address: string) => {
  const res = await signIn(t, username, DEMO_PASSWORD, address);
  expect(res.status).toBe(200);
  return res.body.access_token as string;
};
const get = (t: TestApp, path: string, address: string, token?: string) =>
  request(t.url, 'GET', path, { token, headers: { 'X-Forwarded-For': address } });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `"name";r=N;t=S` of the RateLimit field, for one policy. */
function remaining(res: HttpResponse, policy: string): { r: number; t: number } | null {
  const item = (res.headers.get('ratelimit') ?? '').split(/,\s*/).find((i) => i.startsWith(`"${policy}";`));
  const m = item && /;r=(\d+);t=(\d+)$/.exec(item);
  return m ? { r: Number(m[1]), t: Number(m[2]) } : null;
}

function expectSlowDown(res: HttpResponse, policy: string, maxWait: number): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: 'slow_down', error_description: expect.stringMatching(/^Too many failed sign-in attempts; try again in \d+ seconds$/) });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxWait);
  expect(res.headers.get('ratelimit-policy')).toContain(`"${policy}";q=`);
  expect(remaining(res, policy)).toEqual({ r: 0, t: retryAfter });
}

describe('/auth/token: sign-in lockouts after failed passwords', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      TRUST_PROXY: 'true',
      // What is counted here is the store's count: on a machine loaded by the other test files, a store call slower
      // than the default bound (500 ms) is counted by the insurance limiter instead (its own test is below), one more
      // attempt checked (seen: 6 of 40 instead of 5).
      RATE_LIMIT_STORE_TIMEOUT_MS: '5000',
      LOGIN_MAX_FAILURES_PER_USER_ADDRESS: '5',
      LOGIN_MAX_FAILURES_PER_USER: '10',
      LOGIN_MAX_FAILURES_PER_ADDRESS: '12',
      LOGIN_LOCKOUT_SECONDS: '60',
      LOGIN_FAILURE_WINDOW_SECONDS: '120',
    });
  });
  afterAll(() => t.close());

  it('40 wrong passwords at once: 5 are checked, the other 35 refused, then the right password is refused too', async () => {
    const attacker = '10.0.1.1';
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(t, DEMO_USERS.architect, `wrong-${i}`, attacker)));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(5);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(35);
    for (const r of refused) expectSlowDown(r, 'login-user-address', 60);

    expectSlowDown(await signIn(t, DEMO_USERS.architect, DEMO_PASSWORD, attacker), 'login-user-address', 60);
    // Others are not locked out: another user at that address, the same user elsewhere.
    expect((await signIn(t, DEMO_USERS.other, DEMO_PASSWORD, attacker)).status).toBe(200);
    expect((await signIn(t, DEMO_USERS.architect, DEMO_PASSWORD, '10.0.1.2')).status).toBe(200);
  });

  it('a successful sign-in clears the consecutive failures of that username and address', async () => {
    const address = '10.0.2.1';
    for (let i = 0; i < 4; i++) expect((await signIn(t, DEMO_USERS.member, 'wrong', address)).status).toBe(401);
    expect((await signIn(t, DEMO_USERS.member, DEMO_PASSWORD, address)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await signIn(t, DEMO_USERS.member, 'wrong', address)).status).toBe(401);
    expectSlowDown(await signIn(t, DEMO_USERS.member, 'wrong', address), 'login-user-address', 60);
  });

  it('failures of one username spread over many addresses lock that username everywhere', async () => {
    for (let i = 0; i < 10; i++) expect((await signIn(t, DEMO_USERS.noapi, 'wrong', `10.0.3.${i + 1}`)).status).toBe(401);
    expectSlowDown(await signIn(t, DEMO_USERS.noapi, DEMO_PASSWORD, '10.0.3.100'), 'login-user', 60);
    expect((await signIn(t, DEMO_USERS.other, DEMO_PASSWORD, '10.0.3.100')).status).toBe(200);
  });

  it('failures from one address across many usernames refuse that address for the whole failure window', async () => {
    const address = '10.0.4.1';
    for (let i = 0; i < 12; i++) expect((await signIn(t, `nobody-${i}@demo.test`, 'wrong', address)).status).toBe(401);
    const res = await signIn(t, DEMO_USERS.other, DEMO_PASSWORD, address);
    expect(res.status).toBe(429);
    // Blocked for the failure window (120 s), longer than a username's lockout (60 s).
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(60);
    expect(res.headers.get('ratelimit-policy')).toContain('"login-address";q=12;w=120');
    expect((await signIn(t, DEMO_USERS.other, DEMO_PASSWORD, '10.0.4.2')).status).toBe(200);
  });
});

describe('/auth/token: a lockout ends after LOGIN_LOCKOUT_SECONDS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true', LOGIN_MAX_FAILURES_PER_USER_ADDRESS: '3', LOGIN_LOCKOUT_SECONDS: '2' });
  });
  afterAll(() => t.close());

  it('the right password is refused until the lockout has passed, then accepted', async () => {
    const address = '10.0.1.9';
    for (let i = 0; i < 3; i++) expect((await signIn(t, DEMO_USERS.architect, 'wrong', address)).status).toBe(401);
    expectSlowDown(await signIn(t, DEMO_USERS.architect, 'wrong', address), 'login-user-address', 2);
    expectSlowDown(await signIn(t, DEMO_USERS.architect, DEMO_PASSWORD, address), 'login-user-address', 2);
    await sleep(2100);
    expect((await signIn(t, DEMO_USERS.architect, DEMO_PASSWORD, address)).status).toBe(200);
  });
});

describe('/auth/token: a sign-in the database could not check is no failure', () => {
  it('attempts given back as unchecked never lock the username out', async () => {
    const config = loadConfig({ RATE_LIMIT_STORE: 'memory', LOGIN_MAX_FAILURES_PER_USER_ADDRESS: '2', LOGIN_MAX_FAILURES_PER_USER: '2', LOGIN_MAX_FAILURES_PER_ADDRESS: '2' });
    const limiters = await createRateLimiters(config.rateLimit, '', createLogger(config));
    const throttle = new LoginThrottle(limiters.login);
    try {
      for (let i = 0; i < 5; i++) await (await throttle.attempt(DEMO_USERS.architect, '10.0.0.1')).unchecked();
      await throttle.attempt(DEMO_USERS.architect, '10.0.0.1');
      await throttle.attempt(DEMO_USERS.architect, '10.0.0.1');
      await expect(throttle.attempt(DEMO_USERS.architect, '10.0.0.1')).rejects.toBeInstanceOf(TooManyRequestsError);
    } finally {
      await limiters.stop();
    }
  });
});

describe('/auth/token: requests per client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_TOKEN_POINTS: '3', RATE_LIMIT_TOKEN_WINDOW_SECONDS: '60' });
  });
  afterAll(() => t.close());

  it('answers 429 slow_down with Retry-After and RateLimit headers past the quota; other addresses are served', async () => {
    const address = '10.0.5.1';
    const served = [];
    for (let i = 0; i < 3; i++) served.push(await signIn(t, DEMO_USERS.architect, DEMO_PASSWORD, address));
    expect(served.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(served.map((r) => remaining(r, 'token')?.r)).toEqual([2, 1, 0]);
    expect(served[0].headers.get('ratelimit-policy')).toBe('"token";q=3;w=60');

    const refused = await tokenRequest(t.url, { grant_type: 'refresh_token', client_id: 'svc-api', refresh_token: served[0].body.refresh_token }, { 'X-Forwarded-For': address });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'slow_down', error_description: expect.stringMatching(/^Too many requests: at most 3 every 60 seconds from one address; retry in \d+ seconds$/) });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-policy')).toBe('"token";q=3;w=60');
    expect(remaining(refused, 'token')).toEqual({ r: 0, t: retryAfter });

    expect((await signIn(t, DEMO_USERS.architect, DEMO_PASSWORD, '10.0.5.2')).status).toBe(200);
  });
});

describe('API: requests per caller, REST and GraphQL together', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '4', RATE_LIMIT_API_WINDOW_SECONDS: '60' });
  });
  afterAll(() => t.close());

  it('REST: successful answers carry the RateLimit headers; past the quota 429 {code, message} with Retry-After', async () => {
    const address = '10.0.6.1';
    const token = await tokenAt(t, DEMO_USERS.architect, address);
    const served = [];
    for (let i = 0; i < 4; i++) served.push(await get(t, REST, address, token));
    expect(served.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(served.map((r) => remaining(r, 'api')?.r)).toEqual([3, 2, 1, 0]);
    for (const r of served) {
      expect(r.headers.get('ratelimit-policy')).toBe('"api";q=4;w=60');
      expect(remaining(r, 'api')!.t).toBeGreaterThanOrEqual(1);
      expect(remaining(r, 'api')!.t).toBeLessThanOrEqual(60);
    }

    const refused = await get(t, REST, address, token);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: 429, message: expect.stringMatching(/^Too many requests: at most 4 every 60 seconds per caller; retry in \d+ seconds$/) });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-policy')).toBe('"api";q=4;w=60');
    expect(remaining(refused, 'api')).toEqual({ r: 0, t: retryAfter });

    // The same caller on GraphQL spends the same quota.
    const viaGraphql = await request(t.url, 'POST', '/graphql', { token, body: { query: ME }, headers: { 'X-Forwarded-For': address } });
    expect(viaGraphql.status).toBe(429);
  });

  it('GraphQL: past the quota 429 with errors[].extensions.code RATE_LIMITED; other callers keep their own quota', async () => {
    const address = '10.0.7.1';
    const other = await tokenAt(t, DEMO_USERS.other, address);
    const noapi = await tokenAt(t, DEMO_USERS.noapi, address);
    const graphql = (token: string) => request(t.url, 'POST', '/graphql', { token, body: { query: ME }, headers: { 'X-Forwarded-For': address } });
    expect((await get(t, REST, address, other)).status).toBe(200);
    expect((await get(t, REST, address, other)).status).toBe(200);
    const served = [await graphql(other), await graphql(other)];
    expect(served.map((r) => [r.status, r.body.data?.me?.email])).toEqual([[200, DEMO_USERS.other], [200, DEMO_USERS.other]]);
    expect(remaining(served[1], 'api')?.r).toBe(0);

    const refused = await graphql(other);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      errors: [{ message: expect.stringMatching(/^Too many requests: at most 4 every 60 seconds per caller/), extensions: { code: 'RATE_LIMITED' } }],
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(remaining(refused, 'api')?.r).toBe(0);

    // Same address, another caller: served (its answer is noapi's own 403, not a 429).
    const another = await graphql(noapi);
    expect(another.status).not.toBe(429);
    expect(remaining(another, 'api')?.r).toBe(3);
  });

  it('anonymous requests count against their address; IPv6 clients by their /64 network', async () => {
    const address = '10.0.8.1';
    for (let i = 0; i < 4; i++) expect((await get(t, REST, address)).status).toBe(401);
    const refused = await get(t, REST, address);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe(429);
    // A caller with a token at that address has a quota of its own (member's own answer is a 403).
    const token = await tokenAt(t, DEMO_USERS.member, address);
    expect((await get(t, REST, address, token)).status).toBe(403);

    for (let i = 0; i < 4; i++) expect((await get(t, REST, `2001:db8:1:2::${i + 1}`)).status).toBe(401);
    expect((await get(t, REST, '2001:db8:1:2:ffff::9')).status).toBe(429);
    expect((await get(t, REST, '2001:db8:1:3::1')).status).toBe(401);
  });

  it('health probes are never limited', async () => {
    const address = '10.0.9.1';
    for (let i = 0; i < 5; i++) await get(t, REST, address);
    expect((await get(t, REST, address)).status).toBe(429);
    for (const path of ['/healthz', '/readyz']) {
      const res = await get(t, path, address);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
    }
  });
});

// RATE_LIMIT_MERGE_MS=0 in the two describes below: one store statement per count, whose counts every instance sees at
// once and whose rows are in the table as soon as a request answered. Counting in memory merged every interval (the
// default) is test/rate-limit.merge.test.ts.
describe('PostgreSQL store, a statement per count: counters shared by instances on one database', () => {
  let a: TestApp;
  let b: TestApp;
  const env = { RATE_LIMIT_MERGE_MS: '0', TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '5', LOGIN_MAX_FAILURES_PER_USER_ADDRESS: '3', LOGIN_LOCKOUT_SECONDS: '60' };
  beforeAll(async () => {
    a = await startTestApp(env);
    b = await startTestApp(env, undefined, { database: a.databaseUrl });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('the second instance counts on from the first one\'s requests', async () => {
    const address = '10.1.0.1';
    for (let i = 0; i < 3; i++) expect((await get(a, REST, address)).status).toBe(401);
    const first = await get(b, REST, address);
    expect(remaining(first, 'api')?.r).toBe(1);
    expect((await get(b, REST, address)).status).toBe(401);
    expect((await get(b, REST, address)).status).toBe(429);
    expect((await get(a, REST, address)).status).toBe(429);

    const client = new Client({ connectionString: a.databaseUrl });
    await client.connect();
    try {
      const rows = await client.query<{ points: number }>('select points from rate_limit where key = $1', ['rl:api:ip:10.1.0.1']);
      expect(rows.rows[0].points).toBeGreaterThanOrEqual(6);
    } finally {
      await client.end();
    }
  });

  it('a lockout earned on one instance holds on the other', async () => {
    const address = '10.1.0.2';
    for (let i = 0; i < 3; i++) expect((await signIn(a, DEMO_USERS.architect, 'wrong', address)).status).toBe(401);
    expectSlowDown(await signIn(b, DEMO_USERS.architect, DEMO_PASSWORD, address), 'login-user-address', 60);
  });
});

describe('PostgreSQL store, a statement per count: a slow or failing store neither refuses nor fails requests', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_MERGE_MS: '0', TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '3', RATE_LIMIT_STORE_TIMEOUT_MS: '200' });
  });
  afterAll(() => t.close());

  it('while the counter table is locked, requests are counted in memory with the same quota', async () => {
    const locker = new Client({ connectionString: t.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table rate_limit in access exclusive mode');
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await get(t, REST, '10.2.0.1'));
      expect(answers.map((r) => r.status)).toEqual([401, 401, 401, 429]);
      expect(answers.map((r) => remaining(r, 'api')?.r)).toEqual([2, 1, 0, 0]);
    } finally {
      await locker.query('rollback');
    }
    // Once the table is free again, counting goes back to it.
    expect(remaining(await get(t, REST, '10.2.0.2'), 'api')?.r).toBe(2);
    const rows = await locker.query<{ points: number }>('select points from rate_limit where key = $1', ['rl:api:ip:10.2.0.2']);
    await locker.end();
    expect(rows.rows).toEqual([{ points: 1 }]);
  });
});

describe('Redis store (REDIS_URL)', () => {
  const prefix = `rltest${randomBytes(4).toString('hex')}`;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    await redis.connect();
    const env = { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix, TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '4' };
    // Two instances on two different databases: only Redis can share their counts.
    a = await startTestApp(env);
    b = await startTestApp(env);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('keeps the counters in Redis, shared by instances, under RATE_LIMIT_KEY_PREFIX', async () => {
    const address = '10.3.0.1';
    for (let i = 0; i < 2; i++) expect((await get(a, REST, address)).status).toBe(401);
    expect(remaining(await get(b, REST, address), 'api')?.r).toBe(1);
    expect((await get(b, REST, address)).status).toBe(401);
    expect((await get(a, REST, address)).status).toBe(429);
    expect(Number(await redis.get(`${prefix}:api:ip:${address}`))).toBeGreaterThanOrEqual(5);
    expect(await redis.pttl(`${prefix}:api:ip:${address}`)).toBeGreaterThan(0);

    const client = new Client({ connectionString: a.databaseUrl });
    await client.connect();
    try {
      expect((await client.query('select count(*)::int as n from rate_limit')).rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });
});

describe('Redis store unreachable or not answering', () => {
  let refused: TestApp;
  let silent: TestApp;
  let blackHole: Server;
  beforeAll(async () => {
    // Nothing listens on `closed`; the black hole accepts connections and never answers.
    const closed = await freePort();
    blackHole = createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const silentPort = (blackHole.address() as { port: number }).port;
    const env = { TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '3' };
    refused = await startTestApp({ ...env, REDIS_URL: `redis://127.0.0.1:${closed}` });
    silent = await startTestApp({ ...env, REDIS_URL: `redis://127.0.0.1:${silentPort}` });
  });
  afterAll(async () => {
    await silent?.close();
    await refused?.close();
    await new Promise((resolve) => blackHole.close(resolve));
  });

  it.each([['refused', () => refused], ['never answering', () => silent]])('%s: requests are served and the quota kept in memory, never a 5xx', async (_, app) => {
    const t = app();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get(t, REST, '10.4.0.1')).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const token = await tokenAt(t, DEMO_USERS.architect, '10.4.0.2');
    expect((await get(t, REST, '10.4.0.2', token)).status).toBe(200);
  });
});
