/**
 * Configuration from environment variables, validated once at start. Each setting is declared once, here or in the
 * groups of ./config/ (database, GraphQL, HTTP, webhooks): its variable, default, bounds, rules and reason, as a zod
 * schema built with the readers of ./env.ts. The types are inferred from the declaration, never restated. A bad
 * setting stops the start with one line naming the variable (ConfigError). No file is read here: the trusted
 * documents' manifest is read at start by the code that serves them (graphql/trusted-documents.ts).
 */
import { availableParallelism } from 'node:os';
import type { z } from 'zod';
import { changes } from './config/changes';
import { databaseLimits, replicas } from './config/database';
import { graphql } from './config/graphql';
import { cors, metrics, rateLimit } from './config/http';
import { webhooks } from './config/webhooks';
import { DAY, HTTP, POSTGRES, boolVar, group, intVar, oneOfVar, readSettings, refuse, setting, strVar, urlVar, type Env } from './env';

export { ConfigError, readEnvFile } from './env';

/** The settings other settings' defaults and rules depend on: read first. */
const basics = group({
  nodeEnv: oneOfVar('NODE_ENV', 'development', ['development', 'production', 'test']),
  host: strVar('HOST', '0.0.0.0'),
  port: intVar('PORT', 3000, 0, 65535),
  publicUrl: urlVar('PUBLIC_URL', null, HTTP),
  /** Empty: run the embedded PostgreSQL under dataDir. */
  databaseUrl: urlVar('DATABASE_URL', null, POSTGRES),
  /** After a stop signal: the bound of the whole shutdown; database work is ended shortly before it. */
  shutdownTimeoutMs: intVar('SHUTDOWN_TIMEOUT_MS', 10000, 100, 600000),
}).transform(({ publicUrl, ...read }) => ({
  ...read,
  /** Base URL clients reach the service at; the development identity provider's issuer. */
  publicUrl: publicUrl ?? `http://127.0.0.1:${read.port}`,
}));

type Basics = z.infer<typeof basics>;

/** Every other setting, given the basics. */
function settings(b: Basics) {
  const production = b.nodeEnv === 'production';
  const parallelism = Math.max(2, availableParallelism());
  return group({
    /**
     * A connection that keeps its session (PostgreSQL itself, never a transaction pooler), for what needs one:
     * change decoding (a replication connection), the migrations and their lock, ending this process's busy sessions at shutdown. Null: databaseUrl.
     */
    databaseDirectUrl: urlVar('DATABASE_DIRECT_URL', null, POSTGRES).transform((url, ctx) => (url && !b.databaseUrl
      ? refuse(ctx, 'DATABASE_DIRECT_URL needs DATABASE_URL (the embedded database is reached directly)') : url)),
    /** Read replicas (DATABASE_REPLICA_URLS): read-only work goes to them when they are fresh enough (src/platform/database/replicas.ts). */
    replicas: replicas(b.databaseUrl),
    /**
     * Apply pending migrations at start (under one advisory lock, so that instances starting together run them
     * once). False: the start only checks that none is pending, and refuses to serve otherwise (a release step
     * runs `npm run db:migrate`).
     */
    migrateOnStart: boolVar('DATABASE_MIGRATE_ON_START', true),
    embeddedPgPort: intVar('EMBEDDED_PG_PORT', 54329, 1024, 65535),
    dataDir: strVar('DATA_DIR', '.data'),
    logLevel: oneOfVar('LOG_LEVEL', b.nodeEnv === 'test' ? 'silent' : 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    /** Load the demo data at start (only when it is not there yet). */
    seedDemo: boolVar('SEED_DEMO', b.databaseUrl === null && !production),
    /** Take the client address from X-Forwarded-For. */
    trustProxy: boolVar('TRUST_PROXY', false),
    auth: group({
      /** Serve the built-in development identity provider (/auth/token, /auth/jwks, discovery). */
      devProvider: boolVar('AUTH_DEV_PROVIDER', !production),
      /** Expected `iss`; its discovery document gives the JWKS URL unless jwksUrl is set. */
      issuer: urlVar('AUTH_ISSUER', b.publicUrl, HTTP),
      jwksUrl: urlVar('AUTH_JWKS_URL', null, HTTP),
      /**
       * Token endpoint the API reference's "Authorize" obtains tokens from (the OpenAPI password flow); null:
       * the built-in provider's /auth/token.
       */
      tokenUrl: urlVar('AUTH_TOKEN_URL', null, HTTP),
      clientId: strVar('AUTH_CLIENT_ID', 'svc-api'),
      /** The scope every token must carry. */
      scope: strVar('AUTH_SCOPE', 'svc'),
      clockToleranceSeconds: intVar('AUTH_CLOCK_TOLERANCE_SECONDS', 5, 0, 300),
      /** Least time between two JWKS fetches triggered by an unknown `kid`. */
      jwksCooldownMs: intVar('AUTH_JWKS_COOLDOWN_MS', 5000, 0, 3600000),
      /** How long a caller is kept between requests, at most (src/platform/auth/caller-cache.ts); 0: never kept. */
      callerCacheTtlMs: intVar('AUTH_CALLER_CACHE_TTL_MS', 60000, 0, 3600000),
    }),
    /**
     * Key that signs download URLs: DOWNLOAD_URL_SECRET, or else (null here) the one shared through the
     * database, which createApp loads into this field at start.
     */
    downloadUrlSecret: setting<string | Buffer | null>('DOWNLOAD_URL_SECRET', null, (raw, refused) => (raw.length >= 32 ? raw
      : refused(`must be at least 32 characters (${raw.length} given); leave it empty to use the key kept in the database`))),
    graphql: graphql(production, parallelism),
    /** Web origins whose pages may call the service from a browser (docs/decisions.md, "Browsers"). */
    cors: cors(production),
    /**
     * After a stop signal: the listener stays open this long (readiness already failing), then closes. Load balancers
     * need a few probe periods to see readiness fail; a developer's Ctrl-C needs none.
     */
    shutdownGraceMs: intVar('SHUTDOWN_GRACE_MS', production ? Math.min(5000, Math.floor(b.shutdownTimeoutMs / 2)) : 0, 0, 600000)
      .transform((grace, ctx) => (grace >= b.shutdownTimeoutMs
        ? refuse(ctx, `SHUTDOWN_GRACE_MS must be less than SHUTDOWN_TIMEOUT_MS (${b.shutdownTimeoutMs}), got "${grace}"`) : grace)),
    /** Every wait on the database is bounded; what runs out answers 503 (docs/faults.md). */
    database: databaseLimits(),
    /** Longest a readiness check waits for the database before answering 503. */
    readinessTimeoutMs: intVar('READINESS_TIMEOUT_MS', 1000, 50, 60000),
    /** Change capture: the heartbeats that prove an instance hears, and the bus that fans one decoder out (docs/subscriptions.md). */
    changes: changes(),
    /** Admission control of the other cost classes (src/platform/http/admission.ts; docs/faults.md, "Overload"). */
    admission: group({
      /** REST GETs run at once by this instance; more wait their turn. */
      restReads: intVar('REST_MAX_CONCURRENT_READS', 3 * parallelism, 1, 10000),
      /** REST writes run at once by this instance. */
      restWrites: intVar('REST_MAX_CONCURRENT_WRITES', 8 * parallelism, 1, 10000),
      /** Requests that may wait for a turn, per class; one more is refused at once. */
      queueLength: intVar('ADMISSION_QUEUE_LENGTH', 64, 0, 100000),
      /** Longest a REST request waits for its turn before 503 + Retry-After. */
      maxWaitMs: intVar('ADMISSION_MAX_WAIT_MS', 900, 10, 600000),
      /** Adaptive LIFO: once a queue's oldest has waited this long, newest first; 0, off (the default). */
      lifoAfterMs: intVar('ADMISSION_LIFO_AFTER_MS', 0, 0, 600000),
    }),
    rateLimit: rateLimit(),
    /** IDEMPOTENCY_KEY_TTL_SECONDS: how long the answer of a write sent with an `Idempotency-Key` is kept for its retries. */
    idempotencyKeyTtlSeconds: intVar('IDEMPOTENCY_KEY_TTL_SECONDS', 86400, 1, 30 * DAY),
    metrics: metrics(b, production),
    /** Webhooks to the organizations' endpoints (docs/webhooks.md). */
    webhooks: webhooks(production),
    /** GraphQL subscriptions over WebSocket (docs/subscriptions.md). */
    subscriptions: group({
      /** Changes of one project within this window make one update (the window opens at the first change). */
      coalesceMs: intVar('SUBSCRIPTIONS_COALESCE_MS', 250, 0, 60000),
      /** Subscriptions running at once on one WebSocket connection. */
      maxPerConnection: intVar('SUBSCRIPTIONS_MAX_PER_CONNECTION', 20, 1, 1000),
      /** WebSocket connections of one caller (token subject) open at once on one instance. */
      maxConnectionsPerCaller: intVar('SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER', 10, 1, 100000),
      /** Bytes waiting in the process to be sent to one connection before it is closed as a slow reader. */
      maxBufferedBytes: intVar('SUBSCRIPTIONS_MAX_BUFFERED_BYTES', 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
      /** The keep-alive's interval: a client that has not read everything sent before a ping this long after is closed. */
      sendTimeoutMs: intVar('SUBSCRIPTIONS_SEND_TIMEOUT_MS', 12000, 500, 600000),
    }),
  });
}

/** The configuration: the basics and every other setting, each declared once above. */
export type Config = Basics & z.infer<ReturnType<typeof settings>>;

export type ReplicaConfig = Config['replicas'];
export type CorsSettings = Config['cors'];
export type RateLimitConfig = Config['rateLimit'];
export type RateLimitStore = RateLimitConfig['store'];
export type DatabaseLimits = Config['database'];
export type WebhooksConfig = Config['webhooks'];
export type ChangesConfig = Config['changes'];
export type TrustedDocumentsConfig = Config['graphql']['trustedDocuments'];

/** Reads and validates the configuration; throws ConfigError naming the faulty variable. */
export function loadConfig(env: Env = process.env): Config {
  const read = readSettings(basics, env);
  return { ...read, ...readSettings(settings(read), env) };
}
