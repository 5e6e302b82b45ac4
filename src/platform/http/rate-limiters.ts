import { Pool } from 'pg';
import type { Logger } from 'pino';
import {
  RLWrapperTimeouts, RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis,
  type IRateLimiterOptions, type RateLimiterAbstract, type RateLimiterRes,
} from 'rate-limiter-flexible';
import type { RateLimitConfig } from '../config';
import type { SessionSettings } from '../database/limits';
import type { RateLimitPolicy } from '../errors/errors';
import { MergedCounts, type Limiter, type MergeRow, type MergedTotal } from './merged-counts';

/** A limiter with what RateLimit-Policy advertises of it (draft-ietf-httpapi-ratelimit-headers). */
export interface Quota extends RateLimitPolicy {
  /** How long a key stays refused once past its points (a lockout); 0: until its window ends. */
  blockSeconds: number;
  limiter: Limiter;
}

export interface RateLimiters {
  /** Requests per caller on REST and GraphQL. */
  api: Quota;
  /** Requests per client address to /auth/token. */
  token: Quota;
  /** Cost of GraphQL operations per caller (src/platform/graphql/cost.ts). */
  graphqlCost: Quota;
  /** Failed sign-ins (src/modules/identity/login-throttle.ts). */
  login: { userAddress: Quota; user: Quota; address: Quota };
  /**
   * Statements sent to the PostgreSQL store for counting so far (the library's, and the merges of
   * RATE_LIMIT_MERGE_MS); 0 for the other stores. What tests and the benchmark count per request.
   */
  storeStatements(): number;
  /** Local-first counting of the request quotas (PostgreSQL store, RATE_LIMIT_MERGE_MS > 0); null otherwise. */
  merged: MergedCounts | null;
  /** Merges what is counted in memory, then closes the store's connections. */
  stop(): Promise<void>;
}

interface Spec {
  name: string;
  points: number;
  windowSeconds: number;
  blockSeconds?: number;
  /**
   * Request quotas remember a spent key in memory until its window ends, so that a client hammering past
   * its quota costs no store round trip (the library's inMemoryBlockOnConsumed).
   */
  blockInMemory?: boolean;
  /**
   * Counted in memory and merged into the store every RATE_LIMIT_MERGE_MS (PostgreSQL store): request quotas, not
   * sign-in counters, whose lockouts must hold on every instance at once.
   */
  merge?: boolean;
  /**
   * Sign-in counters wait for the store (bounded by its own connection and statement timeouts) instead of
   * switching to memory after RATE_LIMIT_STORE_TIMEOUT_MS: a burst of guesses that slows the store must
   * not earn a second allowance from the in-memory count.
   */
  waitForStore?: boolean;
}

type StoreLimiterFactory = (opts: IRateLimiterOptions & { insuranceLimiter: RateLimiterAbstract }) => RateLimiterAbstract;

interface Store {
  create: StoreLimiterFactory | null;
  /** The batched upsert of merged counts, and the deletion of keys (PostgreSQL only). */
  merge?: { statement(rows: MergeRow[]): Promise<MergedTotal[]>; remove(keys: string[]): Promise<void> };
  /** Counting statements sent so far. */
  statements(): number;
  ready?: Promise<void>;
  stop(): Promise<void>;
}

/** Table of rate-limiter-flexible's PostgreSQL store, created by a migration (Migration20261201000000_rate_limit). */
const TABLE = 'rate_limit';
/** Expired counters are deleted this often (and when expired for an hour), as the library itself would. */
const CLEANUP_EVERY_MS = 5 * 60_000;

/** Logs at most one warning per period: a store outage would otherwise log once per request. */
function throttledWarn(log: Logger, periodMs: number): (obj: object, msg: string) => void {
  let last = 0;
  return (obj, msg) => {
    const now = Date.now();
    if (now - last < periodMs) return;
    last = now;
    log.warn(obj, msg);
  };
}

/** The one call of node-postgres that rate-limiter-flexible's PostgreSQL store makes on a `pool` client. */
interface StoreClient {
  query(q: { name?: string; text: string; values?: unknown[] }): Promise<unknown>;
}

/**
 * The library names its statements (protocol-level prepared statements, parsed once per connection). A
 * transaction pooler hands each statement to whichever server connection is free, where that name is unknown or
 * already taken (PgBouncer before 1.21, or without max_prepared_statements, does not track them): through one
 * (sessionSettings `transaction`) they are sent unnamed. Not everywhere: parsing the upsert each time added
 * 0.2-0.3 ms to a count on PostgreSQL directly (docs/benchmarks.md, rate-limit).
 */
const unnamed = (pool: Pool): StoreClient => ({ query: ({ text, values }) => pool.query({ text, values }) });

/**
 * The library's upsert (RateLimiterPostgres, not forced) for many keys in one statement: a key whose window is over
 * (or new) starts one with the points sent and the window end sent; else its points are added and its window kept.
 * Rows in key order, so that two instances merging the same keys lock them in the same order (no deadlock).
 */
const MERGE_SQL = `insert into "${TABLE}" as r (key, points, expire)
  select k, p, e from unnest($1::varchar[], $2::int[], $3::bigint[]) as t(k, p, e) order by k
  on conflict (key) do update set
    points = case when r.expire <= $4 then excluded.points else r.points + excluded.points end,
    expire = case when r.expire <= $4 then excluded.expire else r.expire end
  returning key, points, expire`;

/**
 * PostgreSQL store: the database of the service, through a small pool of its own, so that counting never
 * waits behind business queries for a connection, with statement and connection timeouts of its own (the
 * server-side ones only where the connection keeps its startup parameters, see src/platform/database/limits.ts; the
 * client's read bound always).
 */
function postgresStore(config: RateLimitConfig, databaseUrl: string, sessionSettings: SessionSettings, warn: ReturnType<typeof throttledWarn>): Store {
  // Bounds what the sign-in counters may wait (three in a row); request quotas give up after storeTimeoutMs.
  const timeout = Math.max(config.storeTimeoutMs * 2, 1000);
  const pool = new Pool({
    connectionString: databaseUrl,
    max: 5,
    idleTimeoutMillis: 30_000,
    // Idle connections alone do not keep the process running (a process that exits without stop()).
    allowExitOnIdle: true,
    connectionTimeoutMillis: timeout,
    query_timeout: timeout + 250,
    ...(sessionSettings === 'startup' ? { statement_timeout: timeout, lock_timeout: timeout } : {}),
    application_name: 'tender-bff rate limits',
  });
  const named = sessionSettings === 'startup';
  let statements = 0;
  const client: StoreClient = named ? pool : unnamed(pool);
  const storeClient: StoreClient = {
    query: (q) => {
      statements++;
      return client.query(q);
    },
  };
  // A connection dropped while idle (database restarted) is reported here; without a listener it would crash the process.
  pool.on('error', (err) => warn({ err }, 'rate limit store connection lost'));
  const cleanup = setInterval(() => {
    pool.query(`delete from "${TABLE}" where expire < $1`, [Date.now() - 3600_000]).catch((err) => warn({ err }, 'rate limit cleanup failed'));
  }, CLEANUP_EVERY_MS);
  cleanup.unref();
  return {
    // One connection made now rather than by the first burst of requests; and a missing table said at start.
    ready: pool.query(`select 1 from "${TABLE}" limit 1`).then(() => undefined, (err) => warn({ err }, 'rate limit store not usable at start')),
    // tableCreated: the migration made the table; the library's own timer cleanup cannot be stopped, ours can.
    create: (opts) => new RateLimiterPostgres({ ...opts, storeClient, storeType: 'pool', tableName: TABLE, tableCreated: true, clearExpiredByTimeout: false }),
    merge: {
      statement: async (rows) => {
        const result = await storeClient.query({
          ...(named ? { name: 'rate-limit-merge' } : {}),
          text: MERGE_SQL,
          values: [rows.map((r) => r.key), rows.map((r) => r.points), rows.map((r) => r.expire), Date.now()],
        }) as { rows: { key: string; points: number; expire: string | null }[] };
        return result.rows.map((r) => ({ key: r.key, points: r.points, expire: r.expire === null ? null : Number(r.expire) }));
      },
      remove: async (keys) => {
        await storeClient.query({ text: `delete from "${TABLE}" where key = any($1::varchar[])`, values: [keys] });
      },
    },
    statements: () => statements,
    stop: async () => {
      clearInterval(cleanup);
      await pool.end();
    },
  };
}

/** Redis store through ioredis, loaded only when configured. Commands fail at once while disconnected. */
async function redisStore(config: RateLimitConfig, log: Logger, warn: ReturnType<typeof throttledWarn>): Promise<Store> {
  const { Redis } = await import('ioredis');
  const client = new Redis(config.redisUrl!, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(config.storeTimeoutMs, 500),
    // A Redis that stops answering must not hold the sign-in counters, which have no timeout wrapper.
    commandTimeout: Math.max(config.storeTimeoutMs * 2, 1000),
    // ioredis waits this long for a closing connection, in full when the connection was already lost (its
    // timer then outlives stop()); counters need no graceful goodbye.
    disconnectTimeout: 100,
    // Keep trying in the background; meanwhile requests are counted in memory.
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  client.on('error', (err) => warn({ err }, 'rate limit store (Redis) unavailable'));
  try {
    await client.connect();
  } catch (err) {
    log.warn({ err }, 'Redis for rate limits cannot be reached at start: counting in memory until it can');
  }
  return {
    create: (opts) => new RateLimiterRedis({ ...opts, storeClient: client, rejectIfRedisNotReady: true }),
    // Not counted on Redis (PostgreSQL only: what issue 34 measures).
    statements: () => 0,
    stop: async () => {
      client.disconnect();
    },
  };
}

/**
 * The limiters of the service on the configured store (rate-limiter-flexible). When the store fails or
 * does not answer within RATE_LIMIT_STORE_TIMEOUT_MS, the library's insurance limiter counts in this
 * process's memory with the same quotas: a store outage refuses no request and delays one by at most that
 * timeout, and each instance still enforces the limits on its own.
 */
export async function createRateLimiters(config: RateLimitConfig, databaseUrl: string, log: Logger, sessionSettings: SessionSettings = 'startup'): Promise<RateLimiters> {
  const warn = throttledWarn(log, 30_000);
  const store: Store = config.store === 'postgres' ? postgresStore(config, databaseUrl, sessionSettings, warn)
    : config.store === 'redis' ? await redisStore(config, log, warn)
      : { create: null, statements: () => 0, stop: async () => undefined };
  await store.ready;
  const storeWarning = () => warn({ store: config.store }, 'rate limit store failed or is slow: counting in memory');
  // Request quotas counted in memory, merged into the store every RATE_LIMIT_MERGE_MS (docs/rate-limits.md).
  const merged = store.merge && config.mergeMs > 0 ? new MergedCounts({
    statement: store.merge.statement,
    remove: store.merge.remove,
    intervalMs: config.mergeMs,
    timeoutMs: config.storeTimeoutMs,
    onStoreFailure: storeWarning,
  }) : null;

  const quota = (spec: Spec): Quota => {
    const opts: IRateLimiterOptions = {
      keyPrefix: `${config.keyPrefix}:${spec.name}`,
      points: spec.points,
      duration: spec.windowSeconds,
      blockDuration: spec.blockSeconds ?? 0,
    };
    let limiter: Limiter;
    if (!store.create) {
      limiter = new RateLimiterMemory(opts);
    } else {
      const insuranceLimiter = new InsuranceLimiter(opts, storeWarning);
      const stored = store.create({
        ...opts,
        insuranceLimiter,
        ...(spec.blockInMemory ? { inMemoryBlockOnConsumed: spec.points } : {}),
      });
      // blockDuration again: the wrapper copies its own onto the insurance limiter, which must keep the lockout.
      limiter = spec.waitForStore ? stored
        : new RLWrapperTimeouts({ limiter: stored, timeoutMs: config.storeTimeoutMs, insuranceLimiter, blockDuration: opts.blockDuration });
      // The per-count limiter above still counts a key when the merged map is full of keys not merged yet.
      if (merged && spec.merge) limiter = merged.limiter({ keyPrefix: opts.keyPrefix!, points: spec.points, durationSeconds: spec.windowSeconds }, limiter);
    }
    return { name: spec.name, points: spec.points, windowSeconds: spec.windowSeconds, blockSeconds: spec.blockSeconds ?? 0, limiter };
  };

  const { api, token, graphqlCost, login } = config;
  return {
    api: quota({ name: 'api', points: api.points, windowSeconds: api.windowSeconds, blockInMemory: true, merge: true }),
    token: quota({ name: 'token', points: token.points, windowSeconds: token.windowSeconds, blockInMemory: true, merge: true }),
    graphqlCost: quota({ name: 'graphql-cost', points: graphqlCost.points, windowSeconds: graphqlCost.windowSeconds, blockInMemory: true, merge: true }),
    login: {
      userAddress: quota({ name: 'login-user-address', points: login.maxFailuresPerUserAddress, windowSeconds: login.failureWindowSeconds, blockSeconds: login.lockoutSeconds, waitForStore: true }),
      user: quota({ name: 'login-user', points: login.maxFailuresPerUser, windowSeconds: login.failureWindowSeconds, blockSeconds: login.lockoutSeconds, waitForStore: true }),
      // An address that failed this often is refused for a whole window: slow guessing across many usernames.
      address: quota({ name: 'login-address', points: login.maxFailuresPerAddress, windowSeconds: login.failureWindowSeconds, blockSeconds: login.failureWindowSeconds, waitForStore: true }),
    },
    storeStatements: () => store.statements(),
    merged,
    stop: async () => {
      // What was counted since the last merge reaches the store before its connections close.
      await merged?.stop();
      await store.stop();
    },
  };
}

/** The in-memory limiter the library falls back to; says so in the log (throttled). */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(opts: IRateLimiterOptions, private readonly onUse: () => void) {
    super(opts);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>): Promise<RateLimiterRes> {
    this.onUse();
    return super.consume(...args);
  }
}
