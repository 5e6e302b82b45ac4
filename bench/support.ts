import 'reflect-metadata';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { adminQuery, dropDatabase, withDatabase } from '../src/platform/database/admin';
import { startEmbeddedCluster, type EmbeddedCluster } from '../src/platform/database/embedded';
import { DEMO_ARCHITECT_CALLER, DEMO_PASSWORD, DEMO_USERS, loadDemoData } from '../src/seed/demo-data';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';

/** The embedded cluster's port: BENCH_PG_PORT, else 54332. */
function benchPgPort(): number {
  const value = process.env.BENCH_PG_PORT;
  if (value === undefined || value === '') return 54332;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`BENCH_PG_PORT is not a port: ${value}`);
  return port;
}

/** A benchmark writes a whole database: never anywhere but this machine. */
function assertLoopback(url: string): void {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
    throw new Error(`the benchmark only runs against a PostgreSQL on this machine, not ${host}`);
  }
}

/**
 * Runs `fn` over a scratch database, migrated and loaded with the demo data, and drops it afterwards.
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg on port BENCH_PG_PORT
 * (54332 by default: runs side by side, from several working copies, each give their own).
 */
export async function withScratchDatabase(name: string, poolMax: number, fn: (orm: MikroORM, url: string) => Promise<void>): Promise<void> {
  let cluster: EmbeddedCluster | null = null;
  let serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? null;
  if (!serverUrl) {
    cluster = await startEmbeddedCluster({ dataDir: path.resolve('.data/bench-pg'), port: benchPgPort(), fast: true });
    serverUrl = cluster.serverUrl;
  }
  assertLoopback(serverUrl);
  const database = `bench_${name}_${process.pid}_${Date.now()}`;
  await adminQuery(serverUrl, `create database "${database}"`);
  const url = withDatabase(serverUrl, database);
  const orm = await MikroORM.init(ormConfig(url, { pool: { min: 0, max: poolMax } }));
  try {
    await orm.getMigrator().up();
    await loadDemoData(orm.em.fork());
    await fn(orm, url);
  } finally {
    await orm.close(true);
    await dropDatabase(serverUrl, database);
    await cluster?.stop();
  }
}

/** The caller of service-level benchmarks. */
export const ARCHITECT = DEMO_ARCHITECT_CALLER;

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * The whole service on an ephemeral port over a scratch database (`withScratchDatabase`), quiet, with a token of the
 * demo architect from its identity provider; `env` adds to the configuration. The API's rate limit is lifted: a
 * benchmark sends thousands of requests a minute from one caller, which the default quota refuses.
 */
export async function benchServer(orm: MikroORM, url: string, env: Record<string, string> = {}): Promise<{ url: string; token: string; close(): Promise<void> }> {
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_API_POINTS: '1000000000',
    RATE_LIMIT_GRAPHQL_COST_POINTS: '1000000000000', GRAPHQL_QUEUE_LENGTH_PER_CALLER: '100000',
    // The benchmarks' webhook receivers listen on this machine, which no environment allows by default.
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', ...env });
  const app = await createApp({ config, orm, log: createLogger(config) });
  const server = await listen(app, '127.0.0.1', 0);
  config.publicUrl = server.url;
  config.auth.issuer = server.url;
  const token = await demoToken(server.url);
  return {
    url: server.url,
    token,
    async close() {
      await server.close();
      await app.stop();
    },
  };
}

/**
 * A token of a demo user (the architect unless `username` names another of DEMO_USERS, all with the demo password)
 * from a service's development identity provider, for `scope`.
 */
export async function demoToken(url: string, scope = 'svc', username: string = DEMO_USERS.architect): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username, password: DEMO_PASSWORD, scope });
  return ((await (await fetch(`${url}/auth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token;
}
