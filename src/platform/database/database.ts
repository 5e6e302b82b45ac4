import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client, Pool, type QueryResult, type QueryResultRow } from 'pg';
import type { Logger } from 'pino';
import { SESSION_NAME, ormConfig } from '../../../mikro-orm.config';
import type { Config, DatabaseLimits } from '../config';
import { serverSettings, startupParameters, type PoolRole, type SessionSettings } from './limits';
import { WRITES_CHANNEL } from '../events/change-event';
import { isDatabaseUnavailable } from '../errors/errors';
import { startEmbeddedCluster, type EmbeddedCluster } from './embedded';
import { migrate, pendingMigrations } from './migrate';

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

/**
 * Drops a database (tests' and benchmarks' scratch ones), the replication slots on it included: WITH (FORCE) ends
 * its sessions but refuses a database a logical slot is on (55006), and an instance's temporary slot outlives its
 * stop by the moment its WAL sender takes to exit. Its WAL senders are ended, then the drop is retried.
 */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const quoted = `"${name.replace(/"/g, '""')}"`;
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(serverUrl, `drop database if exists ${quoted} with (force)`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
      await adminQuery(serverUrl, 'select pg_terminate_backend(active_pid) from pg_replication_slots where database = $1 and active_pid is not null', [name]);
      await adminQuery(serverUrl, 'select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = $1 and not active', [name]).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
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
 * bound (src/platform/shutdown.ts). Through a connection of its own, since the pool may be the thing that is stuck;
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

/** How the service reaches its database (README, "Scale out"). */
export interface DatabaseRoutes {
  /** Where requests go (DATABASE_URL: PostgreSQL, or a pooler in front of it). */
  url: string;
  /** A connection to PostgreSQL itself (DATABASE_DIRECT_URL, else DATABASE_URL): change decoding, migrations, shutdown. */
  directUrl: string;
  /** Where the request pool's server settings go: how `url` was found at start (probeSessionSettings). */
  sessionSettings: SessionSettings;
  /** Streaming replicas of `url`'s database for read-only work (DATABASE_REPLICA_URLS, src/platform/database/replicas.ts). */
  replicas?: ReplicaEndpoint[];
}

/**
 * The probe pool: readiness's `select 1`, the primary's watch and the change listener's heartbeats, through the
 * request path but never queued behind requests waiting for the request pool. No startup parameters (a pooler may
 * refuse them): the client's bound is the one that matters for a probe.
 */
export class ProbePool {
  private pool: Pool;

  constructor(private readonly url: string, private readonly timeoutMs: number, private readonly max = 2) {
    this.pool = this.open();
  }

  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>> {
    return this.pool.query<R>(text, values);
  }

  /**
   * Gives up the connections made so far; the next probe connects anew. An idle probe connection to a primary that
   * was fenced (read-only, its connections kept) would otherwise keep asking, and heartbeating to, the old server
   * after the address moved to the new one (issue 33).
   */
  renew(): void {
    const old = this.pool;
    this.pool = this.open();
    // Waits for probes running on it; they answer whatever their server says.
    void old.end().catch(() => undefined);
  }

  end(): Promise<void> {
    return this.pool.end();
  }

  private open(): Pool {
    const pool = new Pool({
      connectionString: this.url,
      max: this.max,
      connectionTimeoutMillis: this.timeoutMs,
      query_timeout: this.timeoutMs,
      idleTimeoutMillis: 60000,
      allowExitOnIdle: true,
      application_name: 'tender-bff probes',
    });
    // A connection dropped while idle (database restarted) is discarded by the pool; nothing to do here.
    pool.on('error', () => undefined);
    return pool;
  }
}

export function probePool(url: string, timeoutMs: number, max = 2): ProbePool {
  return new ProbePool(url, timeoutMs, max);
}

/**
 * A small pool for background work (the webhook delivery loop): apart from the request pool, so that it never takes
 * a request's connection, with the request pool's bounds on connecting and on each statement (client-side).
 */
export function backgroundPool(url: string, limits: Pick<DatabaseLimits, 'connectTimeoutMs' | 'statementTimeoutMs'>, name: string, max = 3): Pool {
  const pool = new Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    query_timeout: limits.statementTimeoutMs,
    idleTimeoutMillis: 60000,
    allowExitOnIdle: true,
    application_name: `tender-bff ${name}`,
  });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Whether `url` accepts a login within `timeoutMs` (a connection opened and closed, no statement): what readiness
 * asks of a transaction pooler, which logs a client in without taking one of its shared server connections.
 */
export async function acceptsLogin(url: string, timeoutMs: number): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, application_name: 'tender-bff probes' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The primary's request pool: with replicas, every commit of a caller tells the instances (src/platform/database/replicas.ts). */
export const primaryRole = (config: Config): PoolRole => ({ primary: true, writesChannel: config.replicas.urls.length ? WRITES_CHANNEL : null });

/** A replica's request pool: nothing committed there is a write. */
const REPLICA_ROLE: PoolRole = { primary: false, writesChannel: null };

/** A read replica as src/platform/database/replicas.ts uses it. */
export interface ReplicaEndpoint {
  url: string;
  /** A small pool of its own for the polls, never queued behind requests. */
  probes: ProbePool;
  /** The replica's request pool; null until the replica could be asked how to connect (open). */
  orm: MikroORM | null;
  /** Opens `orm` if it is not open yet: finds where its server settings go, as for the primary. */
  open(): Promise<MikroORM>;
}

/**
 * The replicas of DATABASE_REPLICA_URLS, each with a request pool bounded like the primary's and a probe pool of
 * one connection for the router's polls. None is waited for: a replica down at start gets its request pool at the
 * first poll that reaches it (its server settings found then, as the primary's), and is skipped until then
 * (src/platform/database/replicas.ts).
 */
export async function openReplicas(config: Config, log?: Logger): Promise<ReplicaEndpoint[]> {
  return Promise.all(config.replicas.urls.map(async (url) => {
    let opening: Promise<MikroORM> | null = null;
    const endpoint: ReplicaEndpoint = {
      url,
      // A poll must not outlive the next one: the router's view of a replica is at most a poll old.
      probes: probePool(url, Math.min(config.readinessTimeoutMs, config.replicas.pollMs), 1),
      orm: null,
      open() {
        opening ??= (async () => {
          const sessionSettings = await findSessionSettings(url, config.database, log);
          endpoint.orm = await MikroORM.init(ormConfig(url, { connect: false, ensureDatabase: false }, config.database, sessionSettings, REPLICA_ROLE));
          return endpoint.orm;
        })().catch((err) => {
          opening = null;
          throw err;
        });
        return opening;
      },
    };
    await endpoint.open().catch((err) => {
      log?.warn({ replica: describeDatabase(url), error: describeError(err) }, 'replica not reachable at start: skipped until it answers');
    });
    return endpoint;
  }));
}

/** Closes what openReplicas opened. */
export async function closeReplicas(replicas: ReplicaEndpoint[] = []): Promise<void> {
  await Promise.all(replicas.map(async (r) => {
    await r.orm?.close(true);
    await r.probes.end();
  }));
}

export interface Database extends DatabaseRoutes {
  orm: MikroORM;
  /** endBusySessions on this database, through the direct connection (the pooler may be what is stuck). */
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

/**
 * Where the request pool's server settings can go on `url` (src/platform/database/limits.ts): a connection that takes
 * them in its startup packet and applies them from there (`pg_settings.source` = `client`) is PostgreSQL's own
 * session; a pooler refuses them (PgBouncer: "unsupported startup parameter") or drops them
 * (`ignore_startup_parameters`), and then they go after each BEGIN. Offered exactly as the pool will send them, and
 * read back rather than assumed: whatever sits in front of the database, the bounds hold.
 */
export async function probeSessionSettings(url: string, limits: DatabaseLimits): Promise<SessionSettings> {
  const wanted = serverSettings(limits);
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    query_timeout: limits.connectTimeoutMs,
    ...startupParameters(limits),
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    if (/unsupported startup parameter/i.test((err as Error).message)) return 'transaction';
    throw err;
  }
  try {
    const { rows } = await client.query<{ name: string; setting: string; source: string }>(
      'select name, setting, source from pg_settings where name = any($1)', [Object.keys(wanted)]);
    const applied = new Map(rows.map((r) => [r.name, r]));
    return Object.entries(wanted).every(([name, value]) => applied.get(name)?.setting === value && applied.get(name)?.source === 'client')
      ? 'startup' : 'transaction';
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Through a transaction pooler, a statement outside a transaction runs with the server's defaults for the role
 * and database. The bounds of `limits` that those defaults leave looser (0 is no bound), each as the
 * statement that sets it once (README, "Scale out"); empty when they hold.
 */
export async function looseServerDefaults(url: string, limits: DatabaseLimits): Promise<string[]> {
  const wanted = serverSettings(limits);
  const client = new Client({ connectionString: url, connectionTimeoutMillis: limits.connectTimeoutMs, query_timeout: limits.connectTimeoutMs });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; setting: string; role: string; database: string }>(
      `select name, setting, quote_ident(current_user) as role, quote_ident(current_database()) as database
       from pg_settings where name = any($1)`, [Object.keys(wanted)]);
    return rows
      .filter(({ name, setting }) => (name === 'jit' ? setting !== 'off' : setting === '0' || Number(setting) > Number(wanted[name])))
      .map(({ name, role, database }) => `ALTER ROLE ${role} IN DATABASE ${database} SET ${name} = ${wanted[name]}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * probeSessionSettings, said in the log: through a pooler, one line saying so, and a warning naming the server
 * defaults that leave statements outside a transaction looser than the configured bounds.
 */
export async function findSessionSettings(url: string, limits: DatabaseLimits, log?: Logger): Promise<SessionSettings> {
  const sessionSettings = await probeSessionSettings(url, limits);
  if (sessionSettings === 'startup') return sessionSettings;
  log?.info({ database: describeDatabase(url) }, 'database: a connection pooler refuses or drops startup parameters: the server settings follow each BEGIN');
  const loose = await looseServerDefaults(url, limits);
  if (loose.length) {
    log?.warn({ database: describeDatabase(url), loose },
      `database: through this pooler, statements outside a transaction run with server defaults looser than the configured bounds, and only the client's read bound holds for them; set them once (README, "Scale out"): ${loose.join('; ')}`);
  }
  return sessionSettings;
}

/**
 * Opens the configured database: DATABASE_URL (waited for, see waitForDatabase, with DATABASE_DIRECT_URL when
 * set), or else the embedded cluster under DATA_DIR (database `tender`); applies pending migrations under their
 * lock (or, with DATABASE_MIGRATE_ON_START=false, refuses to go on while one is pending); finds where the
 * request pool's server settings can go; returns the ORM whose pool has the bounded waits of `config.database`.
 */
export async function openDatabase(config: Config, log?: Logger): Promise<Database> {
  let cluster: EmbeddedCluster | null = null;
  let url = config.databaseUrl;
  let directUrl = config.databaseDirectUrl ?? url;
  if (!url) {
    cluster = await startEmbeddedCluster({ dataDir: path.join(config.dataDir, 'pg'), port: config.embeddedPgPort, log });
    await ensureDatabase(cluster.serverUrl, 'tender');
    url = directUrl = withDatabase(cluster.serverUrl, 'tender');
  } else {
    await waitForDatabase(url, config.database, log);
    if (directUrl !== url) await waitForDatabase(directUrl!, config.database, log);
  }
  let orm: MikroORM;
  let sessionSettings: SessionSettings;
  let replicas: ReplicaEndpoint[];
  try {
    if (config.migrateOnStart) {
      const applied = await migrate(directUrl!, log);
      log?.info({ applied: applied.length, migrations: applied }, applied.length ? 'migrations applied' : 'migrations: schema up to date');
    } else {
      const pending = await pendingMigrations(directUrl!);
      if (pending.length) {
        throw new Error(`the schema of ${describeDatabase(directUrl!)} is behind this build (${pending.length} pending migration${pending.length > 1 ? 's' : ''}, first ${pending[0]}): run \`npm run db:migrate\` first, or unset DATABASE_MIGRATE_ON_START`);
      }
    }
    sessionSettings = await findSessionSettings(url, config.database, log);
    orm = await MikroORM.init(ormConfig(url, {}, config.database, sessionSettings, primaryRole(config)));
    replicas = await openReplicas(config, log);
  } catch (err) {
    await cluster?.stop();
    throw err;
  }
  const opened = { url, directUrl: directUrl! };
  return {
    orm,
    ...opened,
    sessionSettings,
    replicas,
    endBusySessions: () => endBusySessions(opened.directUrl),
    close: async () => {
      await orm.close(true);
      await closeReplicas(replicas);
      await cluster?.stop();
    },
  };
}
