// Over 400 lines: the settings' interfaces are restated beside their parsing. Issue 35 asks for one declaration (a
// schema library inferring the type); until then, a setting is added in both halves of this file.
/** Configuration from environment variables, validated once at start. */
import { availableParallelism } from 'node:os';
import ipaddr from 'ipaddr.js';
import { ConfigError, bool, duration, durations, int, oneOf, str, url, type Env } from './env';

export { ConfigError, readEnvFile } from './env';

export type NodeEnv = 'development' | 'production' | 'test';

export interface Config {
  nodeEnv: NodeEnv;
  host: string;
  port: number;
  /** Base URL clients reach the service at; the development identity provider's issuer. */
  publicUrl: string;
  /** Empty: run the embedded PostgreSQL under dataDir. */
  databaseUrl: string | null;
  /**
   * A connection that keeps its session (PostgreSQL itself, never a transaction pooler), for what needs one:
   * change decoding (a replication connection), the migrations and their lock, ending this process's busy sessions at shutdown. Null: databaseUrl.
   */
  databaseDirectUrl: string | null;
  /** Read replicas (DATABASE_REPLICA_URLS): read-only work goes to them when they are fresh enough (src/platform/database/replicas.ts). */
  replicas: ReplicaConfig;
  /**
   * Apply pending migrations at start (under one advisory lock, so that instances starting together run them
   * once). False: the start only checks that none is pending, and refuses to serve otherwise (a release step
   * runs `npm run db:migrate`).
   */
  migrateOnStart: boolean;
  embeddedPgPort: number;
  dataDir: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Load the demo data at start (only when it is not there yet). */
  seedDemo: boolean;
  /** Take the client address from X-Forwarded-For. */
  trustProxy: boolean;
  auth: {
    /** Serve the built-in development identity provider (/auth/token, /auth/jwks, discovery). */
    devProvider: boolean;
    /** Expected `iss`; its discovery document gives the JWKS URL unless jwksUrl is set. */
    issuer: string;
    jwksUrl: string | null;
    /**
     * Token endpoint the API reference's "Authorize" obtains tokens from (the OpenAPI password flow); null:
     * the built-in provider's /auth/token.
     */
    tokenUrl: string | null;
    clientId: string;
    /** The scope every token must carry. */
    scope: string;
    clockToleranceSeconds: number;
    /** Least time between two JWKS fetches triggered by an unknown `kid`. */
    jwksCooldownMs: number;
    /** How long a caller is kept between requests, at most (src/platform/auth/caller-cache.ts); 0: never kept. */
    callerCacheTtlMs: number;
  };
  /**
   * Key that signs download URLs: DOWNLOAD_URL_SECRET, or else (null here) the one shared through the
   * database, which createApp loads into this field at start.
   */
  downloadUrlSecret: string | Buffer | null;
  graphql: {
    introspection: boolean;
    landingPage: boolean;
    /** Operations executed at once by this instance; more wait in turn (docs/faults.md, "Concurrent operations"). */
    maxConcurrentOperations: number;
    /** How long an operation waits for its turn before 503 + Retry-After. */
    queueTimeoutMs: number;
    /** One caller's share of the queries' turns (its mutations': half the writes'), and of their queues; one more is refused with 429. */
    maxConcurrentOperationsPerCaller: number;
    queueLengthPerCaller: number;
    /** The front end's trusted documents and whether arbitrary ones run (docs/trusted-documents.md). */
    trustedDocuments: TrustedDocumentsConfig;
  };
  /** Admission control of the other cost classes (src/platform/http/admission.ts; docs/faults.md, "Overload"). */
  admission: AdmissionConfig;
  /** Web origins whose pages may call the service from a browser (docs/decisions.md, "Browsers"). */
  cors: CorsSettings;
  /** After a stop signal: the listener stays open this long (readiness already failing), then closes. */
  shutdownGraceMs: number;
  /** After a stop signal: the bound of the whole shutdown; database work is ended shortly before it. */
  shutdownTimeoutMs: number;
  rateLimit: RateLimitConfig;
  /** Every wait on the database is bounded; what runs out answers 503 (docs/faults.md). */
  database: DatabaseLimits;
  /** Longest a readiness check waits for the database before answering 503. */
  readinessTimeoutMs: number;
  /** The change listener proves that it hears (src/platform/events/change-listener.ts). */
  listener: ListenerConfig;
  metrics: MetricsConfig;
  subscriptions: SubscriptionsConfig;
  /** IDEMPOTENCY_KEY_TTL_SECONDS: how long the answer of a write sent with an `Idempotency-Key` is kept for its retries. */
  idempotencyKeyTtlSeconds: number;
  /** Webhooks to the organizations' endpoints (docs/webhooks.md). */
  webhooks: WebhooksConfig;
}

/** Trusted documents' settings; the manifest is read at start (trusted-documents.ts, `readTrustedDocuments`), not here. */
export interface TrustedDocumentsConfig {
  mode: 'off' | 'allow' | 'only';
  /** GRAPHQL_TRUSTED_DOCUMENTS: the manifest's path. */
  file: string | null;
  /** Callers (emails, lowercase) who may send arbitrary documents in `only` mode. */
  arbitraryAllowed: string[];
}

/** Webhook delivery (src/modules/webhooks/delivery.ts, docs/webhooks.md). */
export interface WebhooksConfig {
  /** WEBHOOK_DELIVERY: this instance delivers (any number of instances may; each attempt is claimed by one). */
  deliver: boolean;
  /** Bound of one attempt, from connecting to the last byte of the answer read. */
  timeoutMs: number;
  /** Waits before each retry; their number is the number of retries (jitter of up to a fifth added or taken). */
  retryScheduleMs: number[];
  /** An endpoint whose deliveries all failed for this long is disabled, with the reason the API shows. */
  disableAfterMs: number;
  /** Attempts, and finished deliveries and events, are kept this long, then pruned. */
  retentionMs: number;
  /** How often an instance looks for due deliveries when no notification woke it (retries, a missed NOTIFY). */
  pollIntervalMs: number;
  /** Attempts in flight at once on one instance. */
  concurrency: number;
  /** Only https:// URLs (production's default). */
  httpsOnly: boolean;
  /** Networks an endpoint may resolve to although they are private, loopback or link-local (development, tests). */
  allowedNetworks: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  maxEndpointsPerOrganization: number;
  /** Attempts per second to one organization's endpoints, per instance. */
  maxAttemptsPerSecond: number;
  /** After a rotation, the previous secret signs too for this long. */
  secretOverlapMs: number;
}

export interface AdmissionConfig {
  /** REST GETs run at once by this instance; more wait their turn. */
  restReads: number;
  /** REST writes run at once by this instance. */
  restWrites: number;
  /** Requests that may wait for a turn, per class; one more is refused at once. */
  queueLength: number;
  /** Longest a REST request waits for its turn before 503 + Retry-After. */
  maxWaitMs: number;
  /** Adaptive LIFO: once a queue's oldest has waited this long, newest first; 0, off (the default). */
  lifoAfterMs: number;
}

/** Read replicas (README, "Scale out"). */
export interface ReplicaConfig {
  /** Streaming replicas of DATABASE_URL's database; empty: everything on the primary. */
  urls: string[];
  /** A replica further behind the primary than this is skipped until it catches up. */
  maxLagMs: number;
  /** How often each instance reads the primary's WAL position and each replica's replay position. */
  pollMs: number;
}

/** The change listener's heartbeat (docs/subscriptions.md, "Listener"). */
export interface ListenerConfig {
  /** How often the instance notifies itself on a channel of its own. */
  heartbeatIntervalMs: number;
  /** How long a committed heartbeat may take to come back before the instance counts as not hearing. */
  heartbeatTimeoutMs: number;
}

/** GraphQL subscriptions over WebSocket (docs/subscriptions.md). */
export interface SubscriptionsConfig {
  /** Changes of one project within this window make one update (the window opens at the first change). */
  coalesceMs: number;
  /** Subscriptions running at once on one WebSocket connection. */
  maxPerConnection: number;
  /** WebSocket connections of one caller (token subject) open at once on one instance. */
  maxConnectionsPerCaller: number;
}

/** Where /metrics is served (README "Operate"). */
export interface MetricsConfig {
  /** A listener of its own for /metrics (and nothing else); null: none. */
  port: number | null;
  host: string;
  /** Required as `Authorization: Bearer <token>` wherever /metrics is served. */
  token: string | null;
  /**
   * /metrics on the service's own port: with a token, or outside production; never open to the public in
   * production, where a port or a token must be configured.
   */
  onMainPort: boolean;
}

export interface DatabaseLimits {
  /** Connections in the request pool. */
  poolSize: number;
  /** Opening one connection (TCP, TLS, authentication). */
  connectTimeoutMs: number;
  /** Waiting for a free connection of the pool. */
  acquireTimeoutMs: number;
  /** One statement (PostgreSQL `statement_timeout`). */
  statementTimeoutMs: number;
  /** Waiting for a row or table lock (`lock_timeout`). */
  lockTimeoutMs: number;
  /** A transaction left open with nothing running (`idle_in_transaction_session_timeout`). */
  idleInTransactionTimeoutMs: number;
  /** How long a start keeps retrying a database that does not answer. */
  startTimeoutMs: number;
}

export type RateLimitStore = 'postgres' | 'redis' | 'memory';

/** Request quotas and sign-in lockouts (docs/rate-limits.md). */
export interface RateLimitConfig {
  /** Where counters live: PostgreSQL (shared by instances on one database), Redis, or this process. */
  store: RateLimitStore;
  redisUrl: string | null;
  /** Prefix of every counter key, so that deployments (or test runs) can share one Redis. */
  keyPrefix: string;
  /** Longest wait for the store before counting in this process's memory instead. */
  storeTimeoutMs: number;
  /**
   * RATE_LIMIT_MERGE_MS: request quotas (api, token, graphql-cost) on PostgreSQL are counted in this instance's
   * memory and merged into the store at most this often, one statement for every key (src/platform/http/merged-counts.ts);
   * 0: one store statement per count, as before.
   */
  mergeMs: number;
  /** Requests per caller (token `sub`; anonymous requests per client address) on REST and GraphQL. */
  api: { points: number; windowSeconds: number };
  /** Requests per client address to the token endpoint. */
  token: { points: number; windowSeconds: number };
  /** Cost of GraphQL operations per caller (src/platform/graphql/cost.ts). */
  graphqlCost: { points: number; windowSeconds: number };
  login: {
    /** Consecutive failed sign-ins of one username from one address before a lockout. */
    maxFailuresPerUserAddress: number;
    /** Failed sign-ins of one username from any address before a lockout. */
    maxFailuresPerUser: number;
    /** Failed sign-ins from one address (any username) before the address is refused for a whole window. */
    maxFailuresPerAddress: number;
    /** How long a failed sign-in counts. */
    failureWindowSeconds: number;
    lockoutSeconds: number;
  };
}

export interface CorsSettings {
  /** Origins as browsers send them (`scheme://host[:port]`), or '*' for any origin. */
  origins: string[] | '*';
  /** Also any http(s) origin on localhost, 127.0.0.1 or [::1], whatever its port: the default outside production. */
  loopback: boolean;
}

/** Reads and validates the configuration; throws ConfigError naming the faulty variable. */
export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf<NodeEnv>(env, 'NODE_ENV', 'development', ['development', 'production', 'test']);
  const port = int(env, 'PORT', 3000, 0, 65535);
  const publicUrl = url(env, 'PUBLIC_URL', `http://127.0.0.1:${port}`, ['http:', 'https:'])!;
  const production = nodeEnv === 'production';
  const databaseUrl = url(env, 'DATABASE_URL', null, ['postgres:', 'postgresql:']);
  const databaseDirectUrl = url(env, 'DATABASE_DIRECT_URL', null, ['postgres:', 'postgresql:']);
  if (databaseDirectUrl && !databaseUrl) throw new ConfigError('DATABASE_DIRECT_URL needs DATABASE_URL (the embedded database is reached directly)');
  const maxConcurrentOperations = int(env, 'GRAPHQL_MAX_CONCURRENT_OPERATIONS', Math.max(2, availableParallelism()), 1, 10000);
  return {
    nodeEnv,
    host: str(env, 'HOST', '0.0.0.0'),
    port,
    publicUrl,
    databaseUrl,
    databaseDirectUrl,
    replicas: replicaConfig(env, databaseUrl),
    migrateOnStart: bool(env, 'DATABASE_MIGRATE_ON_START', true),
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 54329, 1024, 65535),
    dataDir: str(env, 'DATA_DIR', '.data'),
    logLevel: oneOf(env, 'LOG_LEVEL', nodeEnv === 'test' ? 'silent' : 'info',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    seedDemo: bool(env, 'SEED_DEMO', databaseUrl === null && !production),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    auth: {
      devProvider: bool(env, 'AUTH_DEV_PROVIDER', !production),
      issuer: url(env, 'AUTH_ISSUER', publicUrl, ['http:', 'https:'])!,
      jwksUrl: url(env, 'AUTH_JWKS_URL', null, ['http:', 'https:']),
      tokenUrl: url(env, 'AUTH_TOKEN_URL', null, ['http:', 'https:']),
      clientId: str(env, 'AUTH_CLIENT_ID', 'svc-api'),
      scope: str(env, 'AUTH_SCOPE', 'svc'),
      clockToleranceSeconds: int(env, 'AUTH_CLOCK_TOLERANCE_SECONDS', 5, 0, 300),
      jwksCooldownMs: int(env, 'AUTH_JWKS_COOLDOWN_MS', 5000, 0, 3600000),
      callerCacheTtlMs: int(env, 'AUTH_CALLER_CACHE_TTL_MS', 60000, 0, 3600000),
    },
    downloadUrlSecret: downloadUrlSecret(env),
    graphql: {
      introspection: bool(env, 'GRAPHQL_INTROSPECTION', !production),
      landingPage: bool(env, 'GRAPHQL_LANDING_PAGE', !production),
      maxConcurrentOperations,
      queueTimeoutMs: int(env, 'GRAPHQL_QUEUE_TIMEOUT_MS', 900, 50, 600000),
      // Half the turns: a caller who floods leaves the other half to everyone else at once.
      maxConcurrentOperationsPerCaller: int(env, 'GRAPHQL_MAX_CONCURRENT_OPERATIONS_PER_CALLER', Math.max(1, Math.floor(maxConcurrentOperations / 2)), 1, 10000),
      queueLengthPerCaller: int(env, 'GRAPHQL_QUEUE_LENGTH_PER_CALLER', 8, 0, 100000),
      trustedDocuments: trustedDocumentsSettings(env),
    },
    cors: corsSettings(env, production),
    ...shutdown(env, production),
    database: databaseLimits(env),
    readinessTimeoutMs: int(env, 'READINESS_TIMEOUT_MS', 1000, 50, 60000),
    listener: {
      heartbeatIntervalMs: int(env, 'LISTENER_HEARTBEAT_INTERVAL_MS', 5000, 50, 600000),
      heartbeatTimeoutMs: int(env, 'LISTENER_HEARTBEAT_TIMEOUT_MS', 2000, 10, 600000),
    },
    admission: {
      restReads: int(env, 'REST_MAX_CONCURRENT_READS', 3 * Math.max(2, availableParallelism()), 1, 10000),
      restWrites: int(env, 'REST_MAX_CONCURRENT_WRITES', 8 * Math.max(2, availableParallelism()), 1, 10000),
      queueLength: int(env, 'ADMISSION_QUEUE_LENGTH', 64, 0, 100000),
      maxWaitMs: int(env, 'ADMISSION_MAX_WAIT_MS', 900, 10, 600000),
      lifoAfterMs: int(env, 'ADMISSION_LIFO_AFTER_MS', 0, 0, 600000),
    },
    rateLimit: rateLimitConfig(env),
    idempotencyKeyTtlSeconds: int(env, 'IDEMPOTENCY_KEY_TTL_SECONDS', 86400, 1, 30 * 86400),
    metrics: metricsConfig(env, production),
    webhooks: webhooksConfig(env, production),
    subscriptions: {
      coalesceMs: int(env, 'SUBSCRIPTIONS_COALESCE_MS', 250, 0, 60000),
      maxPerConnection: int(env, 'SUBSCRIPTIONS_MAX_PER_CONNECTION', 20, 1, 1000),
      maxConnectionsPerCaller: int(env, 'SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER', 10, 1, 100000),
    },
  };
}

function downloadUrlSecret(env: Env): string | null {
  const secret = str(env, 'DOWNLOAD_URL_SECRET', '') || null;
  if (secret !== null && secret.length < 32) {
    throw new ConfigError(`DOWNLOAD_URL_SECRET must be at least 32 characters (${secret.length} given); leave it empty to use the key kept in the database`);
  }
  return secret;
}

function metricsConfig(env: Env, production: boolean): MetricsConfig {
  const port = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? null : int(env, 'METRICS_PORT', 0, 0, 65535);
  const token = str(env, 'METRICS_TOKEN', '') || null;
  if (token !== null && !/^[\x21-\x7e]{16,256}$/.test(token)) {
    throw new ConfigError('METRICS_TOKEN must be 16 to 256 visible ASCII characters');
  }
  if (port !== null && port === int(env, 'PORT', 3000, 0, 65535) && port !== 0) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (${port})`);
  }
  return {
    port,
    host: str(env, 'METRICS_HOST', str(env, 'HOST', '0.0.0.0')),
    token,
    onMainPort: port === null && (token !== null || !production),
  };
}

const DAY = 86400;

/** GRAPHQL_TRUSTED_DOCUMENTS names the manifest (then `allow` by default); `only` without one could run nothing. */
function trustedDocumentsSettings(env: Env): TrustedDocumentsConfig {
  const file = str(env, 'GRAPHQL_TRUSTED_DOCUMENTS', '') || null;
  const mode = oneOf<TrustedDocumentsConfig['mode']>(env, 'GRAPHQL_TRUSTED_DOCUMENTS_MODE', file ? 'allow' : 'off', ['off', 'allow', 'only']);
  if (mode !== 'off' && !file) throw new ConfigError(`GRAPHQL_TRUSTED_DOCUMENTS_MODE=${mode} needs GRAPHQL_TRUSTED_DOCUMENTS, the manifest's path`);
  const users = str(env, 'GRAPHQL_ARBITRARY_DOCUMENTS_USERS', '');
  return {
    mode,
    file,
    arbitraryAllowed: users ? users.split(',').map((u) => u.trim().toLowerCase()).filter(Boolean) : [],
  };
}

/**
 * Outside production, endpoints on this machine are allowed (a receiver under development, tests); production allows
 * none unless WEBHOOK_ALLOWED_NETWORKS names them.
 */
function webhooksConfig(env: Env, production: boolean): WebhooksConfig {
  const networks = str(env, 'WEBHOOK_ALLOWED_NETWORKS', production ? 'none' : '127.0.0.0/8,::1/128');
  const allowedNetworks = networks === 'none' ? [] : networks.split(',').map((cidr) => {
    try {
      return ipaddr.parseCIDR(cidr.trim());
    } catch {
      throw new ConfigError(`WEBHOOK_ALLOWED_NETWORKS must be none or a comma-separated list of networks such as 10.0.0.0/8, got "${networks}"`);
    }
  });
  return {
    deliver: bool(env, 'WEBHOOK_DELIVERY', true),
    timeoutMs: duration(env, 'WEBHOOK_TIMEOUT', '10s', 100, 60000),
    retryScheduleMs: durations(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h,14h,24h', 10, 7 * DAY * 1000),
    disableAfterMs: duration(env, 'WEBHOOK_DISABLE_AFTER', '5d', 1000, 90 * DAY * 1000),
    retentionMs: duration(env, 'WEBHOOK_RETENTION', '30d', 60000, 365 * DAY * 1000),
    pollIntervalMs: duration(env, 'WEBHOOK_POLL_INTERVAL', '1s', 10, 600000),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 32, 1, 1000),
    httpsOnly: bool(env, 'WEBHOOK_HTTPS_ONLY', production),
    allowedNetworks,
    maxEndpointsPerOrganization: int(env, 'WEBHOOK_MAX_ENDPOINTS_PER_ORGANIZATION', 20, 1, 1000),
    maxAttemptsPerSecond: int(env, 'WEBHOOK_MAX_ATTEMPTS_PER_SECOND', 100, 1, 100000),
    secretOverlapMs: duration(env, 'WEBHOOK_SECRET_OVERLAP', '24h', 0, 30 * DAY * 1000),
  };
}

function rateLimitConfig(env: Env): RateLimitConfig {
  const redisUrl = url(env, 'REDIS_URL', null, ['redis:', 'rediss:']);
  const store = oneOf<RateLimitStore>(env, 'RATE_LIMIT_STORE', redisUrl ? 'redis' : 'postgres', ['postgres', 'redis', 'memory']);
  if (store === 'redis' && !redisUrl) throw new ConfigError('RATE_LIMIT_STORE=redis needs REDIS_URL');
  const keyPrefix = str(env, 'RATE_LIMIT_KEY_PREFIX', 'rl');
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(keyPrefix)) {
    throw new ConfigError(`RATE_LIMIT_KEY_PREFIX must be 1 to 64 letters, digits or _ . : -, got "${keyPrefix}"`);
  }
  // Windows stay below 24 days: the in-memory fallback keeps them in timers.
  return {
    store,
    redisUrl,
    keyPrefix,
    storeTimeoutMs: int(env, 'RATE_LIMIT_STORE_TIMEOUT_MS', 500, 10, 60000),
    mergeMs: int(env, 'RATE_LIMIT_MERGE_MS', 1000, 0, 60000),
    api: {
      points: int(env, 'RATE_LIMIT_API_POINTS', 600, 1, 1e9),
      windowSeconds: int(env, 'RATE_LIMIT_API_WINDOW_SECONDS', 60, 1, DAY),
    },
    token: {
      points: int(env, 'RATE_LIMIT_TOKEN_POINTS', 100, 1, 1e9),
      windowSeconds: int(env, 'RATE_LIMIT_TOKEN_WINDOW_SECONDS', 60, 1, DAY),
    },
    graphqlCost: {
      points: int(env, 'RATE_LIMIT_GRAPHQL_COST_POINTS', 1_000_000, 1, 1e12),
      windowSeconds: int(env, 'RATE_LIMIT_GRAPHQL_COST_WINDOW_SECONDS', 60, 1, DAY),
    },
    login: {
      maxFailuresPerUserAddress: int(env, 'LOGIN_MAX_FAILURES_PER_USER_ADDRESS', 10, 1, 1e9),
      maxFailuresPerUser: int(env, 'LOGIN_MAX_FAILURES_PER_USER', 30, 1, 1e9),
      maxFailuresPerAddress: int(env, 'LOGIN_MAX_FAILURES_PER_ADDRESS', 100, 1, 1e9),
      failureWindowSeconds: int(env, 'LOGIN_FAILURE_WINDOW_SECONDS', DAY, 1, 7 * DAY),
      lockoutSeconds: int(env, 'LOGIN_LOCKOUT_SECONDS', 900, 1, DAY),
    },
  };
}

/**
 * CORS_ORIGINS: a comma-separated list of origins, or `*`. Unset, development and tests allow the loopback origins
 * (a front end's dev server on another port) and production allows none. Each entry is checked and written the way
 * a browser sends its Origin header, so that a comparison of strings decides.
 */
function corsSettings(env: Env, production: boolean): CorsSettings {
  const raw = str(env, 'CORS_ORIGINS', '').trim();
  if (raw === '') return { origins: [], loopback: !production };
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.includes('*')) {
    if (entries.length > 1) throw new ConfigError(`CORS_ORIGINS must be either * or a list of origins, got "${raw}"`);
    return { origins: '*', loopback: false };
  }
  const origins = entries.map((entry) => {
    let parsed: URL | null = null;
    try {
      parsed = new URL(entry);
    } catch {
      // reported below
    }
    const bare = parsed && ['http:', 'https:'].includes(parsed.protocol) && !parsed.username && !parsed.password
      && parsed.pathname === '/' && !parsed.search && !parsed.hash && !entry.endsWith('?') && !entry.endsWith('#');
    if (!parsed || !bare) {
      throw new ConfigError(`CORS_ORIGINS must list origins such as https://app.example.com (scheme, host and port only), got "${entry}"`);
    }
    return parsed.origin;
  });
  return { origins: [...new Set(origins)], loopback: false };
}

function replicaConfig(env: Env, databaseUrl: string | null): ReplicaConfig {
  const raw = str(env, 'DATABASE_REPLICA_URLS', '').trim();
  const urls = raw === '' ? [] : raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '').map((entry, i) => {
    const checked = url({ [`DATABASE_REPLICA_URLS entry ${i + 1}`]: entry }, `DATABASE_REPLICA_URLS entry ${i + 1}`, null, ['postgres:', 'postgresql:']);
    return checked!;
  });
  if (urls.length && !databaseUrl) throw new ConfigError('DATABASE_REPLICA_URLS needs DATABASE_URL (the embedded database has no replica)');
  if (new Set(urls).size !== urls.length) throw new ConfigError('DATABASE_REPLICA_URLS lists a replica twice');
  const pollMs = int(env, 'DATABASE_REPLICA_POLL_MS', 250, 10, 60000);
  const maxLagMs = int(env, 'DATABASE_REPLICA_MAX_LAG_MS', 5000, 100, 3600000);
  // Lag is known to within a poll: a bound tighter than two polls could never be told from noise.
  if (maxLagMs < 2 * pollMs) throw new ConfigError(`DATABASE_REPLICA_MAX_LAG_MS (${maxLagMs}) must be at least twice DATABASE_REPLICA_POLL_MS (${pollMs})`);
  return { urls, maxLagMs, pollMs };
}

/** Defaults and their reasons: docs/faults.md. Zero (PostgreSQL's "no limit") is refused on purpose. */
function databaseLimits(env: Env): DatabaseLimits {
  const limits: DatabaseLimits = {
    poolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    connectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 3000, 50, 600000),
    acquireTimeoutMs: int(env, 'DATABASE_ACQUIRE_TIMEOUT_MS', 3000, 50, 600000),
    statementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 50, 600000),
    lockTimeoutMs: int(env, 'DATABASE_LOCK_TIMEOUT_MS', 2000, 50, 600000),
    idleInTransactionTimeoutMs: int(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 10000, 50, 3600000),
    startTimeoutMs: int(env, 'DATABASE_START_TIMEOUT_MS', 30000, 0, 3600000),
  };
  // A lock wait is one kind of statement wait: a longer lock_timeout would never fire.
  if (limits.lockTimeoutMs > limits.statementTimeoutMs) {
    throw new ConfigError(`DATABASE_LOCK_TIMEOUT_MS (${limits.lockTimeoutMs}) must not be greater than DATABASE_STATEMENT_TIMEOUT_MS (${limits.statementTimeoutMs})`);
  }
  return limits;
}

function shutdown(env: Env, production: boolean): Pick<Config, 'shutdownGraceMs' | 'shutdownTimeoutMs'> {
  const shutdownTimeoutMs = int(env, 'SHUTDOWN_TIMEOUT_MS', 10000, 100, 600000);
  // Load balancers need a few probe periods to see readiness fail; a developer's Ctrl-C needs none.
  const shutdownGraceMs = int(env, 'SHUTDOWN_GRACE_MS', production ? Math.min(5000, Math.floor(shutdownTimeoutMs / 2)) : 0, 0, 600000);
  if (shutdownGraceMs >= shutdownTimeoutMs) {
    throw new ConfigError(`SHUTDOWN_GRACE_MS must be less than SHUTDOWN_TIMEOUT_MS (${shutdownTimeoutMs}), got "${shutdownGraceMs}"`);
  }
  return { shutdownGraceMs, shutdownTimeoutMs };
}
