import { ConfigError, loadConfig } from '../src/platform/config';

describe('configuration', () => {
  it('has working defaults for development', () => {
    const c = loadConfig({});
    expect(c.nodeEnv).toBe('development');
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBeNull();
    expect(c.embeddedPgPort).not.toBe(5432);
    expect(c.seedDemo).toBe(true);
    expect(c.auth.devProvider).toBe(true);
    expect(c.auth.clientId).toBe('svc-api');
    expect(c.auth.issuer).toBe('http://127.0.0.1:3000');
  });

  it('turns the development identity provider, introspection and demo data off in production', () => {
    const c = loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' });
    expect(c.auth.devProvider).toBe(false);
    expect(c.graphql.introspection).toBe(false);
    expect(c.seedDemo).toBe(false);
  });

  it('keeps the listener open 5 s after a stop signal in production (at most half of SHUTDOWN_TIMEOUT_MS), not at all elsewhere', () => {
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' })).toMatchObject({ shutdownGraceMs: 5000, shutdownTimeoutMs: 10000 });
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x', SHUTDOWN_TIMEOUT_MS: '6000' })).toMatchObject({ shutdownGraceMs: 3000 });
    expect(loadConfig({})).toMatchObject({ shutdownGraceMs: 0, shutdownTimeoutMs: 10000 });
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '2000', SHUTDOWN_TIMEOUT_MS: '3000' })).toMatchObject({ shutdownGraceMs: 2000, shutdownTimeoutMs: 3000 });
  });

  it('stops on a grace period that would not leave time to drain (SHUTDOWN_GRACE_MS >= SHUTDOWN_TIMEOUT_MS)', () => {
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: '10000' })).toThrow('SHUTDOWN_GRACE_MS must be less than SHUTDOWN_TIMEOUT_MS (10000), got "10000"');
  });

  it.each([
    ['PORT', 'abc', /^PORT must be a whole number/],
    ['PORT', '70000', /^PORT must be a whole number from 0 to 65535/],
    ['NODE_ENV', 'staging', /^NODE_ENV must be one of development, production, test/],
    ['DATABASE_URL', 'mysql://x', /^DATABASE_URL must be a postgres: or postgresql: URL/],
    ['DATABASE_URL', 'not a url', /^DATABASE_URL must be a URL/],
    ['TRUST_PROXY', 'maybe', /^TRUST_PROXY must be true or false/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of/],
    ['EMBEDDED_PG_PORT', '80', /^EMBEDDED_PG_PORT must be a whole number from 1024/],
    ['AUTH_ISSUER', 'ftp://idp', /^AUTH_ISSUER must be a http: or https: URL/],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '0', /^DATABASE_STATEMENT_TIMEOUT_MS must be a whole number from 50/],
    ['DATABASE_LOCK_TIMEOUT_MS', '1.5', /^DATABASE_LOCK_TIMEOUT_MS must be a whole number/],
    ['DATABASE_ACQUIRE_TIMEOUT_MS', '-1', /^DATABASE_ACQUIRE_TIMEOUT_MS must be a whole number/],
    ['DATABASE_POOL_SIZE', '0', /^DATABASE_POOL_SIZE must be a whole number from 1/],
    ['DATABASE_START_TIMEOUT_MS', 'soon', /^DATABASE_START_TIMEOUT_MS must be a whole number/],
    ['READINESS_TIMEOUT_MS', '10', /^READINESS_TIMEOUT_MS must be a whole number from 50/],
    ['REDIS_URL', 'http://cache:6379', /^REDIS_URL must be a redis: or rediss: URL/],
    ['RATE_LIMIT_STORE', 'mongo', /^RATE_LIMIT_STORE must be one of postgres, redis, memory/],
    ['RATE_LIMIT_API_POINTS', '0', /^RATE_LIMIT_API_POINTS must be a whole number from 1/],
    ['RATE_LIMIT_TOKEN_WINDOW_SECONDS', '1.5', /^RATE_LIMIT_TOKEN_WINDOW_SECONDS must be a whole number/],
    ['LOGIN_LOCKOUT_SECONDS', '-1', /^LOGIN_LOCKOUT_SECONDS must be a whole number/],
    ['RATE_LIMIT_KEY_PREFIX', 'has space', /^RATE_LIMIT_KEY_PREFIX must be 1 to 64 letters/],
    ['DOWNLOAD_URL_SECRET', 'too-short-a-secret', /^DOWNLOAD_URL_SECRET must be at least 32 characters \(18 given\)/],
    ['METRICS_PORT', '3000', /^METRICS_PORT must differ from PORT \(3000\)/],
    ['METRICS_PORT', 'nine', /^METRICS_PORT must be a whole number/],
  ])('stops on a wrong %s (%s) with a line naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('bounds every wait on the database by default (docs/faults.md)', () => {
    const c = loadConfig({});
    expect(c.database).toEqual({
      poolSize: 10,
      connectTimeoutMs: 3000,
      acquireTimeoutMs: 3000,
      statementTimeoutMs: 5000,
      lockTimeoutMs: 2000,
      idleInTransactionTimeoutMs: 10000,
      startTimeoutMs: 30000,
    });
    expect(c.readinessTimeoutMs).toBe(1000);
  });

  it('takes the database bounds from the environment', () => {
    const c = loadConfig({
      DATABASE_POOL_SIZE: '4', DATABASE_CONNECT_TIMEOUT_MS: '500', DATABASE_ACQUIRE_TIMEOUT_MS: '600', DATABASE_STATEMENT_TIMEOUT_MS: '700',
      DATABASE_LOCK_TIMEOUT_MS: '300', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '900', DATABASE_START_TIMEOUT_MS: '0', READINESS_TIMEOUT_MS: '200',
    });
    expect(c.database).toEqual({
      poolSize: 4, connectTimeoutMs: 500, acquireTimeoutMs: 600, statementTimeoutMs: 700, lockTimeoutMs: 300, idleInTransactionTimeoutMs: 900, startTimeoutMs: 0,
    });
    expect(c.readinessTimeoutMs).toBe(200);
  });

  it('scale out: decoding and migrations on DATABASE_URL unless DATABASE_DIRECT_URL names another, migrations at start, a heartbeat every 5 s heard within 2 s, no bus', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://app@pgbouncer:6432/tender' });
    expect([c.databaseUrl, c.databaseDirectUrl, c.migrateOnStart]).toEqual(['postgres://app@pgbouncer:6432/tender', null, true]);
    expect(c.changes).toEqual({
      heartbeatIntervalMs: 5000, heartbeatTimeoutMs: 2000, busUrl: null, busKeyPrefix: 'tender', busMaxLength: 100000, slotName: null, leaseMs: 4000,
      slotWarnBytes: 1024 * 1024 * 1024,
    });
    const d = loadConfig({
      DATABASE_URL: 'postgres://app@pgbouncer:6432/tender', DATABASE_DIRECT_URL: 'postgres://app@db:5432/tender', DATABASE_MIGRATE_ON_START: 'false',
      LISTENER_HEARTBEAT_INTERVAL_MS: '1000', LISTENER_HEARTBEAT_TIMEOUT_MS: '300',
    });
    expect([d.databaseDirectUrl, d.migrateOnStart, d.changes.heartbeatIntervalMs, d.changes.heartbeatTimeoutMs]).toEqual(['postgres://app@db:5432/tender', false, 1000, 300]);
  });

  it('change bus: CHANGE_BUS_URL names a Redis, and the slot, prefix, length and lease may be set; anything else is refused with one line', () => {
    const c = loadConfig({
      CHANGE_BUS_URL: 'redis://bus:6379/2', CHANGE_BUS_KEY_PREFIX: 'prod', CHANGE_BUS_MAX_LENGTH: '5000', CHANGE_SLOT_NAME: 'tender_prod', CHANGE_DECODER_LEASE_MS: '8000',
    });
    expect(c.changes).toMatchObject({ busUrl: 'redis://bus:6379/2', busKeyPrefix: 'prod', busMaxLength: 5000, slotName: 'tender_prod', leaseMs: 8000 });
    expect(() => loadConfig({ CHANGE_BUS_URL: 'nats://bus:4222' })).toThrow('CHANGE_BUS_URL must be a redis: or rediss: URL, got "nats://bus:4222"');
    expect(() => loadConfig({ CHANGE_SLOT_NAME: 'Tender-Prod' })).toThrow('CHANGE_SLOT_NAME must be 1 to 63 lower-case letters, digits or underscores (a PostgreSQL slot name), got "Tender-Prod"');
    expect(() => loadConfig({ CHANGE_DECODER_LEASE_MS: '100' })).toThrow('CHANGE_DECODER_LEASE_MS must be a whole number from 400 to 600000');
  });

  it('replicas: none by default; a comma list of PostgreSQL URLs, skipped past 5 s of lag, polled every 250 ms', () => {
    expect(loadConfig({}).replicas).toEqual({ urls: [], maxLagMs: 5000, pollMs: 250 });
    const c = loadConfig({
      DATABASE_URL: 'postgres://app@db:5432/tender', DATABASE_REPLICA_URLS: ' postgres://app@replica-1/tender, postgresql://app@replica-2/tender ',
      DATABASE_REPLICA_MAX_LAG_MS: '2000', DATABASE_REPLICA_POLL_MS: '100',
    });
    expect(c.replicas).toEqual({ urls: ['postgres://app@replica-1/tender', 'postgresql://app@replica-2/tender'], maxLagMs: 2000, pollMs: 100 });
  });

  it('refuses replicas without DATABASE_URL, a replica listed twice, a URL that is not PostgreSQL\'s, and a lag bound under two polls', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://r/t' })).toThrow('DATABASE_REPLICA_URLS needs DATABASE_URL');
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/t', DATABASE_REPLICA_URLS: 'postgres://r/t,postgres://r/t' })).toThrow('DATABASE_REPLICA_URLS lists a replica twice');
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/t', DATABASE_REPLICA_URLS: 'postgres://r/t,mysql://r/t' })).toThrow('DATABASE_REPLICA_URLS entry 2 must be a postgres: or postgresql: URL');
    expect(() => loadConfig({ DATABASE_REPLICA_MAX_LAG_MS: '400', DATABASE_REPLICA_POLL_MS: '250' }))
      .toThrow('DATABASE_REPLICA_MAX_LAG_MS (400) must be at least twice DATABASE_REPLICA_POLL_MS (250)');
  });

  it('refuses DATABASE_DIRECT_URL without DATABASE_URL (the embedded database is reached directly), and a URL that is not PostgreSQL\'s', () => {
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'postgres://app@db:5432/tender' })).toThrow('DATABASE_DIRECT_URL needs DATABASE_URL');
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/t', DATABASE_DIRECT_URL: 'http://db/t' })).toThrow('DATABASE_DIRECT_URL must be a postgres: or postgresql: URL');
    expect(() => loadConfig({ LISTENER_HEARTBEAT_INTERVAL_MS: '0' })).toThrow('LISTENER_HEARTBEAT_INTERVAL_MS must be a whole number from 50 to 600000');
  });

  it('refuses a lock timeout longer than the statement timeout, which could never fire', () => {
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '1000', DATABASE_LOCK_TIMEOUT_MS: '2000' }))
      .toThrow('DATABASE_LOCK_TIMEOUT_MS (2000) must not be greater than DATABASE_STATEMENT_TIMEOUT_MS (1000)');
  });

  it('rate limits: counters in PostgreSQL, limits no front end reaches, lockouts after 10 failed sign-ins', () => {
    expect(loadConfig({}).rateLimit).toEqual({
      store: 'postgres',
      redisUrl: null,
      keyPrefix: 'rl',
      storeTimeoutMs: 500,
      mergeMs: 1000,
      api: { points: 600, windowSeconds: 60 },
      token: { points: 100, windowSeconds: 60 },
      graphqlCost: { points: 1_000_000, windowSeconds: 60 },
      login: { maxFailuresPerUserAddress: 10, maxFailuresPerUser: 30, maxFailuresPerAddress: 100, failureWindowSeconds: 86400, lockoutSeconds: 900 },
    });
  });

  it('rate limits: REDIS_URL moves the counters to Redis unless RATE_LIMIT_STORE says otherwise', () => {
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379' }).rateLimit).toMatchObject({ store: 'redis', redisUrl: 'redis://cache:6379' });
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379', RATE_LIMIT_STORE: 'postgres' }).rateLimit.store).toBe('postgres');
    expect(loadConfig({ RATE_LIMIT_STORE: 'memory' }).rateLimit.store).toBe('memory');
    expect(() => loadConfig({ RATE_LIMIT_STORE: 'redis' })).toThrow('RATE_LIMIT_STORE=redis needs REDIS_URL');
  });

  it('rate limits: RATE_LIMIT_MERGE_MS, 0 (a store statement per count) to 60000', () => {
    expect(loadConfig({ RATE_LIMIT_MERGE_MS: '0' }).rateLimit.mergeMs).toBe(0);
    expect(loadConfig({ RATE_LIMIT_MERGE_MS: '250' }).rateLimit.mergeMs).toBe(250);
    expect(() => loadConfig({ RATE_LIMIT_MERGE_MS: '-1' })).toThrow('RATE_LIMIT_MERGE_MS must be a whole number from 0 to 60000');
  });

  it('subscriptions: a 250 ms coalescing window, 20 subscriptions per connection, 10 connections per caller, 1 MiB waiting and 12 s to read it per connection; each bounded', () => {
    expect(loadConfig({}).subscriptions).toEqual({ coalesceMs: 250, maxPerConnection: 20, maxConnectionsPerCaller: 10, maxBufferedBytes: 1048576, sendTimeoutMs: 12000 });
    expect(loadConfig({
      SUBSCRIPTIONS_COALESCE_MS: '0', SUBSCRIPTIONS_MAX_PER_CONNECTION: '5', SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER: '100',
      SUBSCRIPTIONS_MAX_BUFFERED_BYTES: '65536', SUBSCRIPTIONS_SEND_TIMEOUT_MS: '500',
    }).subscriptions).toEqual({ coalesceMs: 0, maxPerConnection: 5, maxConnectionsPerCaller: 100, maxBufferedBytes: 65536, sendTimeoutMs: 500 });
    expect(() => loadConfig({ SUBSCRIPTIONS_SEND_TIMEOUT_MS: '0' })).toThrow('SUBSCRIPTIONS_SEND_TIMEOUT_MS must be a whole number from 500 to 600000, got "0"');
    expect(() => loadConfig({ SUBSCRIPTIONS_MAX_PER_CONNECTION: '0' })).toThrow('SUBSCRIPTIONS_MAX_PER_CONNECTION must be a whole number from 1 to 1000, got "0"');
    expect(() => loadConfig({ SUBSCRIPTIONS_COALESCE_MS: 'fast' })).toThrow(ConfigError);
  });

  it('webhooks: a 10 s bound, retries over about three days, http accepted outside production only, no private or loopback network allowed anywhere', () => {
    const dev = loadConfig({}).webhooks;
    expect(dev).toMatchObject({ deliver: true, timeoutMs: 10000, disableAfterMs: 5 * 86400e3, retentionMs: 30 * 86400e3, httpsOnly: false, secretOverlapMs: 86400e3 });
    const retries = dev.retryScheduleMs.reduce((a, b) => a + b, 0);
    expect(dev.retryScheduleMs).toHaveLength(9);
    expect(retries / 86400e3).toBeGreaterThan(2.5);
    expect(retries / 86400e3).toBeLessThan(3.5);
    expect(dev.allowedNetworks).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'test' }).webhooks.allowedNetworks).toEqual([]);
    const prod = loadConfig({ NODE_ENV: 'production', METRICS_TOKEN: 'a-token-of-sixteen-chars' }).webhooks;
    expect(prod).toMatchObject({ httpsOnly: true, allowedNetworks: [] });
    const local = loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' }).webhooks;
    expect(local.allowedNetworks.map(([net, bits]) => `${net.toString()}/${bits}`)).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '100ms,1s,2m', WEBHOOK_TIMEOUT: '2s' }).webhooks).toMatchObject({ retryScheduleMs: [100, 1000, 120000], timeoutMs: 2000 });
  });

  it('webhooks: refuses a duration, a schedule or a network that is not one, with one line naming the variable', () => {
    expect(() => loadConfig({ WEBHOOK_TIMEOUT: '10' })).toThrow(/^WEBHOOK_TIMEOUT must be a duration such as 500ms, 5s/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5s,,1m' })).toThrow(/^WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of durations/);
    expect(() => loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0' })).toThrow(/^WEBHOOK_ALLOWED_NETWORKS must be none or a comma-separated list of networks/);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT: '2m' })).toThrow(ConfigError);
  });

  it('reads no file: the trusted documents\' manifest is named here and read at start (trusted-documents.ts)', () => {
    expect(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: '/nowhere/persisted-documents.json' }).graphql.trustedDocuments)
      .toEqual({ file: '/nowhere/persisted-documents.json', mode: 'allow', arbitraryAllowed: [] });
    expect(loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: '/m.json', GRAPHQL_TRUSTED_DOCUMENTS_MODE: 'only', GRAPHQL_ARBITRARY_DOCUMENTS_USERS: ' Dev@Example.com, ,b@x.test' })
      .graphql.trustedDocuments).toEqual({ file: '/m.json', mode: 'only', arbitraryAllowed: ['dev@example.com', 'b@x.test'] });
    expect(loadConfig({}).graphql.trustedDocuments).toEqual({ file: null, mode: 'off', arbitraryAllowed: [] });
  });

  it('derives the defaults that depend on other settings from them (PUBLIC_URL from PORT, METRICS_HOST from HOST) and checks METRICS_PORT against PORT', () => {
    const c = loadConfig({ HOST: '127.0.0.2', PORT: '9100' });
    expect([c.publicUrl, c.auth.issuer, c.metrics.host]).toEqual(['http://127.0.0.1:9100', 'http://127.0.0.1:9100', '127.0.0.2']);
    expect(() => loadConfig({ PORT: '9100', METRICS_PORT: '9100' })).toThrow(/^METRICS_PORT must differ from PORT \(9100\)$/);
    expect(loadConfig({ PORT: '9100', METRICS_PORT: '3000' }).metrics.port).toBe(3000);
    expect(loadConfig({ GRAPHQL_MAX_CONCURRENT_OPERATIONS: '7' }).graphql.maxConcurrentOperationsPerCaller).toBe(3);
  });

  it('refuses with one line naming the variable and what it must be', () => {
    expect(() => loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0' }))
      .toThrow(/^WEBHOOK_ALLOWED_NETWORKS must be none or a comma-separated list of networks such as 10\.0\.0\.0\/8, got "10\.0\.0\.0"$/);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/^METRICS_TOKEN must be 16 to 256 visible ASCII characters$/);
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/^PORT must be a whole number from 0 to 65535, got "70000"$/);
  });
});
