import { Client } from 'pg';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { MergedCounts, type Limiter, type MergeRow } from '../src/platform/http/merged-counts';
import { DEMO_USERS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request, type HttpResponse } from './support/http';

// docs/rate-limits.md, "Counted in memory, merged into the store": request quotas on PostgreSQL are counted in each
// instance's memory and merged into the store at most every RATE_LIMIT_MERGE_MS, one statement for every key.

const REST = '/api/svc/v1/organizations';
const get = (t: TestApp, address: string, token?: string) => request(t.url, 'GET', REST, { token, headers: { 'X-Forwarded-For': address } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `"name";r=N;t=S` of the RateLimit field, for one policy. */
function remaining(res: HttpResponse, policy = 'api'): { r: number; t: number } | null {
  const item = (res.headers.get('ratelimit') ?? '').split(/,\s*/).find((i) => i.startsWith(`"${policy}";`));
  const m = item && /;r=(\d+);t=(\d+)$/.exec(item);
  return m ? { r: Number(m[1]), t: Number(m[2]) } : null;
}

async function storedPoints(databaseUrl: string, key: string): Promise<number | null> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = await client.query<{ points: number }>('select points from rate_limit where key = $1', [key]);
    return rows.rows[0]?.points ?? null;
  } finally {
    await client.end();
  }
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

describe('two instances on one database: counts merged through the store', () => {
  let a: TestApp;
  let b: TestApp;
  const env = { TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '10', RATE_LIMIT_MERGE_MS: '300' };
  beforeAll(async () => {
    a = await startTestApp(env);
    b = await startTestApp(env, undefined, { database: a.databaseUrl });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('each instance learns the other\'s count at its merges; the caller is refused on both once the total is spent', async () => {
    const address = '10.20.0.1';
    const key = `rl:api:ip:${address}`;
    const onA = [];
    for (let i = 0; i < 6; i++) onA.push(await get(a, address));
    expect(onA.map((r) => remaining(r)?.r)).toEqual([9, 8, 7, 6, 5, 4]);
    // Within the interval, b has not heard of a's requests yet (the documented lag).
    const onB = [];
    for (let i = 0; i < 3; i++) onB.push(await get(b, address));
    expect(onB.map((r) => remaining(r)?.r)).toEqual([9, 8, 7]);
    // Both merge on their own timers: the store holds the total.
    await eventually(async () => (await storedPoints(a.databaseUrl, key)) === 9, 'both instances merged');
    // The last merge answered the total to the instance that sent it, the other learns it at its next merge.
    await get(a, address);
    await get(b, address);
    await eventually(async () => (await storedPoints(a.databaseUrl, key)) === 11, 'merged again');
    await sleep(400);
    for (const t of [a, b]) {
      const refused = await get(t, address);
      expect(refused.status).toBe(429);
      expect(remaining(refused)).toEqual({ r: 0, t: Number(refused.headers.get('retry-after')) });
    }
    // Spent keys are refused in memory, not counted again.
    await a.app.limiters.merged!.flush();
    await b.app.limiters.merged!.flush();
    expect(await storedPoints(a.databaseUrl, key)).toBe(11);
  });

  it('a window started on one instance is the store\'s window on both', async () => {
    const address = '10.20.0.2';
    await get(a, address);
    await a.app.limiters.merged!.flush();
    await sleep(2000);
    const onB = await get(b, address);
    await b.app.limiters.merged!.flush();
    const again = await get(b, address);
    // b's own first request started a window of 60 s, 2 s later than a's; once merged, b uses the store's.
    expect(remaining(onB)!.t).toBe(60);
    expect(remaining(again)!.t).toBeLessThanOrEqual(58);
    expect(remaining(again)!.r).toBe(7);
  });
});

describe('store statements per request', () => {
  const measure = async (t: TestApp, n: number, send: () => Promise<HttpResponse>) => {
    await t.app.limiters.merged?.flush();
    const before = t.app.limiters.storeStatements();
    const started = Date.now();
    for (let i = 0; i < n; i++) expect((await send()).status).toBe(200);
    const elapsed = Date.now() - started;
    return { perRequest: (t.app.limiters.storeStatements() - before) / n, elapsed, statements: t.app.limiters.storeStatements() - before };
  };

  it('RATE_LIMIT_MERGE_MS=0: one per REST request, two per GraphQL request (requests, then cost)', async () => {
    const t = await startTestApp({ RATE_LIMIT_MERGE_MS: '0' });
    try {
      const token = await tokenFor(t.url, DEMO_USERS.architect);
      expect((await measure(t, 20, () => request(t.url, 'GET', REST, { token }))).perRequest).toBe(1);
      expect((await measure(t, 20, () => gql(t.url, token, '{ me { email } }'))).perRequest).toBe(2);
      expect(t.app.limiters.merged).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('default (1000 ms): at most one statement per interval, whatever the number of requests and keys', async () => {
    const t = await startTestApp({});
    try {
      expect(t.config.rateLimit.mergeMs).toBe(1000);
      const [architect, other] = await Promise.all([tokenFor(t.url, DEMO_USERS.architect), tokenFor(t.url, DEMO_USERS.other)]);
      let i = 0;
      const { perRequest, elapsed, statements } = await measure(t, 200, () => gql(t.url, i++ % 2 ? architect : other, '{ me { email } }'));
      expect(statements).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1);
      expect(perRequest).toBeLessThan(0.1);
      // Every count reached the store all the same.
      await t.app.limiters.merged!.flush();
      const client = new Client({ connectionString: t.databaseUrl });
      await client.connect();
      try {
        const rows = await client.query<{ key: string; points: number }>(`select key, points from rate_limit where key like 'rl:api:sub:%'`);
        expect(rows.rows.reduce((sum, r) => sum + r.points, 0)).toBe(200);
      } finally {
        await client.end();
      }
    } finally {
      await t.close();
    }
  });
});

describe('one instance: refusal past the quota, at once, without the store', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Merges far apart: every decision below is this instance's memory.
    t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '5', RATE_LIMIT_MERGE_MS: '60000' });
  });
  afterAll(() => t.close());

  it('counts down in the RateLimit field, then 429 with Retry-After and r=0; no store statement meanwhile', async () => {
    const address = '10.21.0.1';
    const before = t.app.limiters.storeStatements();
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await get(t, address));
    expect(answers.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(answers.map((r) => remaining(r)?.r)).toEqual([4, 3, 2, 1, 0, 0, 0]);
    for (const r of answers) {
      expect(r.headers.get('ratelimit-policy')).toBe('"api";q=5;w=60');
      expect(remaining(r)!.t).toBeGreaterThanOrEqual(59);
    }
    const refused = answers[5];
    expect(refused.body).toEqual({ code: 429, message: expect.stringMatching(/^Too many requests: at most 5 every 60 seconds per caller; retry in \d+ seconds$/) });
    expect(remaining(refused)).toEqual({ r: 0, t: Number(refused.headers.get('retry-after')) });
    expect(t.app.limiters.storeStatements()).toBe(before);
    expect(await storedPoints(t.databaseUrl, `rl:api:ip:${address}`)).toBeNull();
    // Merged: the five counted, the refusals of a spent key not (as the store's limiter blocks a spent key in memory).
    await t.app.limiters.merged!.flush();
    expect(t.app.limiters.storeStatements()).toBe(before + 1);
    expect(await storedPoints(t.databaseUrl, `rl:api:ip:${address}`)).toBe(5);
    // Another caller is not affected.
    expect(remaining(await get(t, '10.21.0.2'))?.r).toBe(4);
  });
});

describe('shutdown', () => {
  it('merges what was counted since the last merge before the store\'s connections close', async () => {
    const env = { TRUST_PROXY: 'true', RATE_LIMIT_MERGE_MS: '60000' };
    const owner = await startTestApp(env);
    try {
      const t = await startTestApp(env, undefined, { database: owner.databaseUrl });
      for (let i = 0; i < 3; i++) await get(t, '10.22.0.1');
      expect(await storedPoints(owner.databaseUrl, 'rl:api:ip:10.22.0.1')).toBeNull();
      await t.close();
      expect(await storedPoints(owner.databaseUrl, 'rl:api:ip:10.22.0.1')).toBe(3);
    } finally {
      await owner.close();
    }
  });
});

describe('a slow or failing store neither refuses nor fails requests (docs/rate-limits.md, "When the store fails")', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_API_POINTS: '3', RATE_LIMIT_STORE_TIMEOUT_MS: '1000', RATE_LIMIT_MERGE_MS: '100', LOG_LEVEL: 'warn' },
      undefined, { logTo: { write: (line) => void lines.push(line) } });
  });
  afterAll(() => t.close());

  it('table locked (merges time out): counted in memory with the same quota, requests never wait for the store', async () => {
    const locker = new Client({ connectionString: t.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table rate_limit in access exclusive mode');
      const answers = [];
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        answers.push(await get(t, '10.23.0.1'));
        // Counting one by one in the store, the first would wait the whole RATE_LIMIT_STORE_TIMEOUT_MS.
        expect(Date.now() - started).toBeLessThan(1000);
        await sleep(300);
      }
      expect(answers.map((r) => r.status)).toEqual([401, 401, 401, 429, 429]);
      expect(answers.map((r) => remaining(r)?.r)).toEqual([2, 1, 0, 0, 0]);
      await eventually(async () => lines.some((l) => l.includes('rate limit store failed or is slow: counting in memory')), 'the fallback logged');
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    // Once the table is free again, counts reach it.
    expect(remaining(await get(t, '10.23.0.2'))?.r).toBe(2);
    await eventually(async () => (await storedPoints(t.databaseUrl, 'rl:api:ip:10.23.0.2')) === 1, 'merged once the table is free');
  });

  it('table missing (merges fail): counted in memory with the same quota, never a 5xx', async () => {
    const admin = new Client({ connectionString: t.databaseUrl });
    await admin.connect();
    try {
      await admin.query('alter table rate_limit rename to rate_limit_away');
      const statuses = [];
      for (let i = 0; i < 5; i++) {
        statuses.push((await get(t, '10.23.1.1')).status);
        await sleep(150);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await admin.query('alter table rate_limit_away rename to rate_limit');
      await admin.end();
    }
    // The counts of the outage stayed in memory (as the store's fallback), the key is still refused here.
    expect((await get(t, '10.23.1.1')).status).toBe(429);
    expect(await storedPoints(t.databaseUrl, 'rl:api:ip:10.23.1.1')).toBeNull();
  });
});

describe('the keys held are bounded', () => {
  it('past the bound, settled keys are forgotten, and keys not merged yet are counted by the per-count limiter', async () => {
    const sent: MergeRow[][] = [];
    let release: () => void = () => undefined;
    // The store answers once released.
    const gate = new Promise<void>((r) => { release = r; });
    const merged = new MergedCounts({
      statement: async (rows) => {
        sent.push(rows);
        await gate;
        return rows.map((r) => ({ key: r.key, points: r.points, expire: r.expire }));
      },
      remove: async () => undefined,
      intervalMs: 60000,
      timeoutMs: 60000,
      maxEntries: 10,
      onStoreFailure: () => undefined,
    });
    const overflowed: string[] = [];
    const overflow: Limiter = {
      consume: async (key) => {
        overflowed.push(key);
        return new RateLimiterRes(99, 1000, 1, true);
      },
      reward: async () => new RateLimiterRes(),
      delete: async () => true,
    };
    const limiter = merged.limiter({ keyPrefix: 'rl:api', points: 100, durationSeconds: 60 }, overflow);
    try {
      for (let i = 0; i < 10; i++) await limiter.consume(`k${i}`);
      expect(merged.size).toBe(10);
      // Full of keys not merged: the 11th is counted by the per-count limiter, and a merge starts at once.
      await limiter.consume('k10');
      expect(overflowed).toEqual(['k10']);
      expect(merged.size).toBe(10);
      expect(sent).toHaveLength(1);
      expect(sent[0].map((r) => r.key)).toEqual(Array.from({ length: 10 }, (_, i) => `rl:api:k${i}`));
      release();
      await merged.flush();
      // Merged, so settled: room is made (down to 90%) for new keys, which are counted here again.
      await limiter.consume('k11');
      expect(overflowed).toEqual(['k10']);
      expect(merged.size).toBeLessThanOrEqual(10);
      expect((await limiter.consume('k11')).remainingPoints).toBe(98);
    } finally {
      release();
      await merged.stop();
    }
  });
});
