import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import Router from '@koa/router';
import { Redis } from 'ioredis';
import { createApp, listen } from '../src/app';
import { loadConfig, type RateLimitStore } from '../src/platform/config';
import type { AppState } from '../src/platform/http/state';
import { createLogger } from '../src/platform/logger';
import { createRateLimiters } from '../src/platform/http/rate-limiters';
import { demoToken, withScratchDatabase } from './support';

/**
 * Added latency of the rate limiter per request, for each store (PostgreSQL twice: a statement per count,
 * RATE_LIMIT_MERGE_MS=0, and counted in memory merged every second, the default):
 *  - in process: ROUNDS `consume()` calls of the API quota, what every request pays;
 *  - HTTP: ROUNDS sequential anonymous GETs of a probe route answering 204, one app per store;
 *  - store statements per GraphQL request (PostgreSQL): GRAPHQL_ROUNDS sequential `{ me { email } }` of one caller.
 * The in-memory store is the baseline of the HTTP series (its consume costs microseconds).
 * PostgreSQL: a scratch database (see support.ts). Redis: BENCH_REDIS_URL, else redis://127.0.0.1:6379
 * when it answers (skipped otherwise); keys under a prefix of this run, deleted at the end. Loopback only.
 */

const ROUNDS = 1000;
const WARM_UP = 100;
const GRAPHQL_ROUNDS = 1000;

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const fmt = (ms: number) => `${(ms * 1000).toFixed(0).padStart(6)} µs`;
function report(label: string, xs: number[]): void {
  const sorted = [...xs].sort((a, b) => a - b);
  console.log(`rate-limit: ${label.padEnd(30)} median ${fmt(pct(sorted, 50))}  p95 ${fmt(pct(sorted, 95))}  p99 ${fmt(pct(sorted, 99))}  (n=${sorted.length})`);
}

async function reachableRedis(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export async function run(): Promise<void> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const host = new URL(redisUrl).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) throw new Error(`the benchmark only uses a Redis on this machine, not ${host}`);
  const stores: Array<{ label: string; store: RateLimitStore; mergeMs: number }> = [
    { label: 'memory', store: 'memory', mergeMs: 0 },
    { label: 'postgres, merge 0', store: 'postgres', mergeMs: 0 },
    { label: 'postgres, merge 1000', store: 'postgres', mergeMs: 1000 },
  ];
  if (await reachableRedis(redisUrl)) stores.push({ label: 'redis', store: 'redis', mergeMs: 0 });
  else console.log(`rate-limit: no Redis at ${redisUrl}, redis store skipped`);
  const prefix = `bench${process.pid}${Date.now()}`;

  await withScratchDatabase('ratelimit', 4, async (orm, url) => {
    const running = [];
    try {
      for (const { label, store, mergeMs } of stores) {
        const config = loadConfig({
          NODE_ENV: 'test', PORT: '0', DATABASE_URL: url, LOG_LEVEL: 'silent',
          RATE_LIMIT_STORE: store, REDIS_URL: store === 'redis' ? redisUrl : '', RATE_LIMIT_KEY_PREFIX: `${prefix}${label.replace(/\W/g, '')}`,
          RATE_LIMIT_API_POINTS: '1000000000', RATE_LIMIT_GRAPHQL_COST_POINTS: '1000000000000', RATE_LIMIT_MERGE_MS: String(mergeMs),
        });
        const log = createLogger(config);
        const limiters = await createRateLimiters(config.rateLimit, url, log);
        const app = await createApp({ config, orm, log });
        const probe = new Router<AppState>();
        probe.get('/__bench/probe', (ctx) => { ctx.status = 204; });
        app.koa.use(probe.routes());
        const server = await listen(app, '127.0.0.1', 0);
        config.publicUrl = server.url;
        config.auth.issuer = server.url;
        running.push({ store: label, limiters, app, server });
      }
      // Interleaved, so that load from elsewhere on the machine weighs on every store alike.
      const inProcess = running.map(() => [] as number[]);
      const http = running.map(() => [] as number[]);
      for (let i = 0; i < WARM_UP + ROUNDS; i++) {
        for (const [s, r] of running.entries()) {
          let started = performance.now();
          await r.limiters.api.limiter.consume(`bench:${i % 50}`);
          const consumed = performance.now() - started;
          started = performance.now();
          const res = await fetch(`${r.server.url}/__bench/probe`);
          await res.arrayBuffer();
          if (res.status !== 204) throw new Error(`probe answered ${res.status}`);
          if (i < WARM_UP) continue;
          inProcess[s].push(consumed);
          http[s].push(performance.now() - started);
        }
      }
      for (const [s, r] of running.entries()) report(`${r.store}: consume() in process`, inProcess[s]);
      for (const [s, r] of running.entries()) report(`${r.store}: HTTP GET, anonymous`, http[s]);

      // Store statements per GraphQL request: the request quota, then the cost charged.
      for (const r of running.filter((x) => x.store.startsWith('postgres'))) {
        const token = await demoToken(r.server.url);
        const body = JSON.stringify({ query: '{ me { email } }' });
        await r.app.limiters.merged?.flush();
        const before = r.app.limiters.storeStatements();
        const latencies: number[] = [];
        const started = performance.now();
        for (let i = 0; i < GRAPHQL_ROUNDS; i++) {
          const t0 = performance.now();
          const res = await fetch(`${r.server.url}/graphql`, { method: 'POST', body, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`graphql answered ${res.status}`);
          latencies.push(performance.now() - t0);
        }
        const elapsed = performance.now() - started;
        const statements = r.app.limiters.storeStatements() - before;
        console.log(`rate-limit: ${r.store.padEnd(22)} store statements per GraphQL request ${(statements / GRAPHQL_ROUNDS).toFixed(3)} (${statements} in ${GRAPHQL_ROUNDS} requests, ${(elapsed / 1000).toFixed(1)} s)`);
        report(`${r.store}: GraphQL POST`, latencies);
      }
    } finally {
      for (const r of running) {
        await r.server.close();
        await r.app.stop();
        await r.limiters.stop();
      }
    }
  });

  if (stores.some((s) => s.store === 'redis')) {
    const client = new Redis(redisUrl);
    const keys = await client.keys(`${prefix}*`);
    if (keys.length) await client.del(...keys);
    client.disconnect();
  }
}
