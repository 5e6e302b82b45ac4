import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { DATA_MODEL, ormConfig } from '../../mikro-orm.config';
import { createApp, listen, type App, type RunningServer } from '../../src/app';
import { loadConfig, type Config } from '../../src/platform/config';
import { closeReplicas, openReplicas, primaryRole, type ReplicaEndpoint } from '../../src/platform/database/replica-pools';
import { endBusySessions } from '../../src/platform/database/admin';
import { findSessionSettings } from '../../src/platform/database/session-settings';
import { createLogger } from '../../src/platform/logger';
import { shutDown } from '../../src/platform/shutdown';
import { createDatabaseFrom, dropDatabase } from './databases';
import { RECEIVERS_ON_THIS_MACHINE } from './receivers-env';

/** A fresh database of the run: a copy of the migrated, seeded template. */
export async function freshDatabase(label = 'db'): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const serverUrl = process.env.TEST_SERVER_URL!;
  const name = `${process.env.TEST_RUN_PREFIX}${label.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(0, 20)}_${randomBytes(4).toString('hex')}`;
  const url = await createDatabaseFrom(serverUrl, process.env.TEST_TEMPLATE_DB!, name);
  return { url, name, drop: () => dropDatabase(serverUrl, name) };
}

/**
 * Counts the SQL statements the ORM sends while a function runs. A measurement starts once the statements
 * already under way have answered and nothing new was sent for 10 ms: graphql-js resolves an
 * operation as soon as an error nulls its result, while sibling fields still send their statements (the
 * executor comparison of test/graphql.dashboard.test.ts does), and those belong to the request before.
 */
export class QueryCounter {
  private count = 0;
  private active = false;
  private inFlight = 0;
  private sent = 0;
  readonly statements: string[] = [];
  constructor(orm: MikroORM) {
    const knex = orm.em.getKnex();
    knex.on('query', (q: { sql: string }) => {
      // knex announces a transaction's BEGIN, COMMIT and ROLLBACK but never their answers: not in flight.
      if (!/^(BEGIN|COMMIT|ROLLBACK)\b/i.test(q.sql)) this.inFlight++;
      this.sent++;
      if (!this.active) return;
      this.count++;
      this.statements.push(q.sql);
    });
    const settled = () => {
      this.inFlight = Math.max(0, this.inFlight - 1);
    };
    knex.on('query-response', settled);
    knex.on('query-error', settled);
  }

  /** Waits (at most 2 s) until no statement is in flight and none was sent for 10 ms. */
  private async quiet(): Promise<void> {
    const deadline = Date.now() + 2000;
    for (;;) {
      const sent = this.sent;
      await new Promise((resolve) => setTimeout(resolve, 10));
      if ((this.inFlight === 0 && this.sent === sent) || Date.now() > deadline) return;
    }
  }

  async measure<T>(fn: () => Promise<T>): Promise<{ result: T; statements: number; sql: string[] }> {
    await this.quiet();
    this.count = 0;
    this.statements.length = 0;
    this.active = true;
    try {
      const result = await fn();
      return { result, statements: this.count, sql: [...this.statements] };
    } finally {
      this.active = false;
    }
  }
}

export interface TestApp {
  url: string;
  /** Its database; another app started with `{ database: app.databaseUrl }` shares it. */
  databaseUrl: string;
  config: Config;
  orm: MikroORM;
  app: App;
  server: RunningServer;
  queries: QueryCounter;
  /** Its read replicas (DATABASE_REPLICA_URLS), in order. */
  replicas: ReplicaEndpoint[];
  close(): Promise<void>;
}

/**
 * Rate limits far above what any test sends from 127.0.0.1 (hundreds of requests and dozens of tokens per
 * app); test/rate-limit.test.ts lowers them through `env`. The counters still go through the store.
 */
const UNLIMITED_IN_TESTS: Record<string, string> = {
  RATE_LIMIT_API_POINTS: '1000000',
  RATE_LIMIT_TOKEN_POINTS: '1000000',
  // Tests run dashboards of thousands of values, hundreds of times, as one caller.
  RATE_LIMIT_GRAPHQL_COST_POINTS: '1000000000000',
  LOGIN_MAX_FAILURES_PER_USER_ADDRESS: '1000000',
  LOGIN_MAX_FAILURES_PER_USER: '1000000',
  LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000',
};

export interface TestAppOptions {
  /** Run over this database (another app's) instead of a fresh copy; it is not dropped at close. */
  database?: string;
  /** Receives the app's log lines. */
  logTo?: { write(line: string): void };
}

/** Starts the whole service on an ephemeral port over its own fresh database; `logTo` receives its log lines. */
export async function startTestApp(env: Record<string, string> = {}, beforeListen?: (app: App) => void, options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.database
    ? { url: options.database, drop: async () => undefined }
    : await freshDatabase(expect.getState().testPath?.split('/').pop()?.replace(/\.test\.ts$/, '') ?? 'app');
  const t = await startAppOn(db.url, env, beforeListen, options.logTo);
  return {
    ...t,
    close: async () => {
      await t.close();
      await db.drop();
    },
  };
}

/**
 * Under `npm run test:pgbouncer` (TEST_POOLER_PORT, test/support/global-setup.ts), an app on the run's server goes
 * through the run's PgBouncer, its direct connection to the server itself; apps on a cluster of a test's own, or
 * given their routes by the test, are left as they are.
 */
function throughRunPooler(databaseUrl: string, env: Record<string, string>): Record<string, string> {
  const port = process.env.TEST_POOLER_PORT;
  if (!port || env.DATABASE_URL || env.DATABASE_DIRECT_URL) return {};
  const server = new URL(process.env.TEST_SERVER_URL!);
  const target = new URL(databaseUrl);
  if (target.host !== server.host) return {};
  return { DATABASE_URL: `postgres://tender@127.0.0.1:${port}${target.pathname}`, DATABASE_DIRECT_URL: databaseUrl };
}

/**
 * Starts the whole service on an ephemeral port over a given database, with the configuration `env` gives
 * (the request pool gets its bounded waits from it, as in `npm start`).
 */
export async function startAppOn(databaseUrl: string, env: Record<string, string> = {}, beforeListen?: (app: App) => void, logTo?: { write(line: string): void }): Promise<TestApp> {
  const routed = throughRunPooler(databaseUrl, env);
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', DATABASE_URL: databaseUrl, ...UNLIMITED_IN_TESTS, ...RECEIVERS_ON_THIS_MACHINE, ...env, ...routed });
  const url = config.databaseUrl!;
  // As openDatabase finds them (src/platform/database/database.ts), without the migrations: the run's template has them.
  const directUrl = config.databaseDirectUrl ?? url;
  const log = createLogger(config, logTo);
  const sessionSettings = await findSessionSettings(url, config.database, log);
  const orm = await MikroORM.init(ormConfig(url, {}, config.database, sessionSettings, primaryRole(config)));
  const replicas = await openReplicas(config, DATA_MODEL, log);
  const app = await createApp({ config, orm, log, database: { url, directUrl, sessionSettings, replicas } });
  beforeListen?.(app);
  const server = await listen(app, '127.0.0.1', 0);
  // Tokens are bound to the issuer; point it at the address this instance really listens on.
  if (!env.AUTH_ISSUER && !env.PUBLIC_URL) {
    config.publicUrl = server.url;
    config.auth.issuer = server.url;
  }
  return {
    url: server.url,
    // What a test's own SQL uses: the database itself, not the pooler.
    databaseUrl: directUrl,
    config,
    orm,
    app,
    server,
    queries: new QueryCounter(orm),
    replicas,
    // The service's own shutdown, without a grace period: a request a test left blocked is ended at 1.5 s.
    close: async () => {
      await shutDown({
        lifecycle: app.lifecycle, running: server, log, graceMs: 0, timeoutMs: 2000,
        endDatabaseWork: () => endBusySessions(directUrl),
        release: async () => {
          await app.stop();
          await orm.close(true);
          await closeReplicas(replicas);
        },
      });
    },
  };
}
