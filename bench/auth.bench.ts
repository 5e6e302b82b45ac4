import 'reflect-metadata';
import { withScratchDatabase } from './support';
import { performance } from 'node:perf_hooks';
import Router from '@koa/router';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { authenticate } from '../src/platform/http/auth.middleware';
import type { AppState } from '../src/platform/http/state';
import { createLogger } from '../src/platform/logger';
import { DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { loadCaller } from '../src/platform/auth/caller.service';
import { CallerCache } from '../src/platform/auth/caller-cache';
import { TokenVerifier } from '../src/platform/auth/token-verifier';

/**
 * Added latency of authentication per request. Starts the whole service on an ephemeral loopback port
 * over a scratch database (migrated and seeded, dropped at the end), with two probe routes that differ
 * only by the authentication middleware, and times:
 *  - HTTP: ROUNDS sequential GETs of the open probe vs the protected one (same token, warm key cache);
 *  - in process: TokenVerifier.verify alone, loadCaller alone, and both, ROUNDS times each.
 *
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg (the
 * convention of statistics.bench.ts); loopback only.
 */

const ROUNDS = 500;
const WARM_UP = 50;

/** Times `fn` ROUNDS times after a warm-up; milliseconds. */
async function time(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARM_UP; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const fmt = (ms: number) => `${(ms * 1000).toFixed(0).padStart(6)} µs`;
function report(label: string, sorted: number[]): void {
  console.log(`auth: ${label.padEnd(34)} median ${fmt(pct(sorted, 50))}  p95 ${fmt(pct(sorted, 95))}  p99 ${fmt(pct(sorted, 99))}  (n=${sorted.length})`);
}

export async function run(): Promise<void> {
  await withScratchDatabase('auth', 4, async (orm, url) => {
    // Rate limits out of the way: this measures authentication (rate-limit.bench.ts measures the limiter).
    const config = loadConfig({ NODE_ENV: 'test', PORT: '0', DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_API_POINTS: '1000000000' });
    const app = await createApp({ config, orm, log: createLogger(config) });
    const probe = new Router<AppState>({ prefix: '/__bench' });
    const verifier = new TokenVerifier(config);
    probe.get('/open', (ctx) => { ctx.status = 204; });
    // Callers never kept: this measures the lookup every request made before the cache, and still makes when missed.
    probe.get('/protected', authenticate(verifier, new CallerCache(0)), (ctx) => { ctx.status = 204; });
    app.koa.use(probe.routes());
    const server = await listen(app, '127.0.0.1', 0);
    config.publicUrl = server.url;
    config.auth.issuer = server.url;
    try {
      const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' });
      const tokenRes = await fetch(`${server.url}/auth/token`, { method: 'POST', body: form });
      if (tokenRes.status !== 200) throw new Error(`token request answered ${tokenRes.status}`);
      const token = ((await tokenRes.json()) as { access_token: string }).access_token;
      const authorization = `Bearer ${token}`;

      const get = async (p: string, headers: Record<string, string> = {}) => {
        const res = await fetch(server.url + p, { headers });
        await res.arrayBuffer();
        if (res.status !== 204) throw new Error(`${p} answered ${res.status}`);
      };
      const started = performance.now();
      await get('/__bench/protected', { Authorization: authorization });
      console.log(`auth: first protected request (loads the keys) ${((performance.now() - started) * 1000).toFixed(0)} µs`);

      // Interleaved, so that load from elsewhere on the machine weighs on both series alike.
      const open: number[] = [];
      const guarded: number[] = [];
      const added: number[] = [];
      for (let i = 0; i < WARM_UP + ROUNDS; i++) {
        let t0 = performance.now();
        await get('/__bench/open');
        const a = performance.now() - t0;
        t0 = performance.now();
        await get('/__bench/protected', { Authorization: authorization });
        const b = performance.now() - t0;
        if (i < WARM_UP) continue;
        open.push(a);
        guarded.push(b);
        added.push(b - a);
      }
      const sort = (xs: number[]) => xs.sort((x, y) => x - y);
      report('HTTP GET, no authentication', sort(open));
      report('HTTP GET, bearer token verified', sort(guarded));
      report('added per request (paired diff)', sort(added));

      const em = () => orm.em.fork();
      const verified = await verifier.verify(authorization, '127.0.0.1');
      report('TokenVerifier.verify (RS256, cached)', await time(() => verifier.verify(authorization, '127.0.0.1')));
      report('loadCaller (one SQL statement)', await time(() => loadCaller(em(), verified)));
      report('verify + loadCaller', await time(async () => loadCaller(em(), await verifier.verify(authorization, '127.0.0.1'))));
    } finally {
      await server.close();
      await app.stop();
    }
  });
}
