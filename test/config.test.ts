import { ConfigError, loadConfig } from '../src/config';

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
    ['REDIS_URL', 'http://cache:6379', /^REDIS_URL must be a redis: or rediss: URL/],
    ['RATE_LIMIT_STORE', 'mongo', /^RATE_LIMIT_STORE must be one of postgres, redis, memory/],
    ['RATE_LIMIT_API_POINTS', '0', /^RATE_LIMIT_API_POINTS must be a whole number from 1/],
    ['RATE_LIMIT_TOKEN_WINDOW_SECONDS', '1.5', /^RATE_LIMIT_TOKEN_WINDOW_SECONDS must be a whole number/],
    ['LOGIN_LOCKOUT_SECONDS', '-1', /^LOGIN_LOCKOUT_SECONDS must be a whole number/],
    ['RATE_LIMIT_KEY_PREFIX', 'has space', /^RATE_LIMIT_KEY_PREFIX must be 1 to 64 letters/],
  ])('stops on a wrong %s (%s) with a line naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('rate limits: counters in PostgreSQL, limits no front end reaches, lockouts after 10 failed sign-ins', () => {
    expect(loadConfig({}).rateLimit).toEqual({
      store: 'postgres',
      redisUrl: null,
      keyPrefix: 'rl',
      storeTimeoutMs: 500,
      api: { points: 600, windowSeconds: 60 },
      token: { points: 100, windowSeconds: 60 },
      login: { maxFailuresPerUserAddress: 10, maxFailuresPerUser: 30, maxFailuresPerAddress: 100, failureWindowSeconds: 86400, lockoutSeconds: 900 },
    });
  });

  it('rate limits: REDIS_URL moves the counters to Redis unless RATE_LIMIT_STORE says otherwise', () => {
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379' }).rateLimit).toMatchObject({ store: 'redis', redisUrl: 'redis://cache:6379' });
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379', RATE_LIMIT_STORE: 'postgres' }).rateLimit.store).toBe('postgres');
    expect(loadConfig({ RATE_LIMIT_STORE: 'memory' }).rateLimit.store).toBe('memory');
    expect(() => loadConfig({ RATE_LIMIT_STORE: 'redis' })).toThrow('RATE_LIMIT_STORE=redis needs REDIS_URL');
  });
});
