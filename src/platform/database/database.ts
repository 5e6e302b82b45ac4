import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import type { Logger } from 'pino';
import { ormConfig, type DataModel } from './orm-config';
import type { Config, DatabaseLimits } from '../config';
import type { SessionSettings } from './limits';
import { isDatabaseUnavailable } from '../errors/database-faults';
import { startEmbeddedCluster, type EmbeddedCluster } from './embedded';
import { migrate, pendingMigrations } from './migrate';
import { endBusySessions, ensureDatabase, withDatabase } from './admin';
import { describeDatabase, describeError } from './describe';
import { backoffMs } from '../retry';
import { closeReplicas, openReplicas, primaryRole, type ReplicaEndpoint } from './replica-pools';
import { findSessionSettings } from './session-settings';

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

export interface Database extends DatabaseRoutes {
  orm: MikroORM;
  /** endBusySessions on this database, through the direct connection (the pooler may be what is stuck). */
  endBusySessions(): Promise<number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the database answers `select 1`, retrying with exponential backoff (0.25 s doubling up to
 * 5 s) for at most `startTimeoutMs`, with one log line per failed attempt. Only an unreachable or starting
 * database is retried: a wrong password or an unknown database fails at once. Throws one clear sentence.
 */
async function waitForDatabase(url: string, limits: Pick<DatabaseLimits, 'startTimeoutMs' | 'connectTimeoutMs'>, log?: Logger): Promise<void> {
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
      const wait = Math.min(backoffMs(attempt, 250, 5000), deadline - Date.now());
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
 * Opens the configured database: DATABASE_URL (waited for, see waitForDatabase, with DATABASE_DIRECT_URL when
 * set), or else the embedded cluster under DATA_DIR (database `tender`); applies pending migrations under their
 * lock (or, with DATABASE_MIGRATE_ON_START=false, refuses to go on while one is pending); finds where the
 * request pool's server settings can go; returns the ORM whose pool has the bounded waits of `config.database`.
 */
export async function openDatabase(config: Config, model: DataModel, log?: Logger): Promise<Database> {
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
      const applied = await migrate(model, directUrl!, log);
      log?.info({ applied: applied.length, migrations: applied }, applied.length ? 'migrations applied' : 'migrations: schema up to date');
    } else {
      const pending = await pendingMigrations(model, directUrl!);
      if (pending.length) {
        throw new Error(`the schema of ${describeDatabase(directUrl!)} is behind this build (${pending.length} pending migration${pending.length > 1 ? 's' : ''}, first ${pending[0]}): run \`npm run db:migrate\` first, or unset DATABASE_MIGRATE_ON_START`);
      }
    }
    sessionSettings = await findSessionSettings(url, config.database, log);
    orm = await MikroORM.init(ormConfig(model, url, {}, config.database, sessionSettings, primaryRole(config)));
    replicas = await openReplicas(config, model, log);
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
