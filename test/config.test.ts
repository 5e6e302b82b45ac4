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
  ])('stops on a wrong %s (%s) with a line naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
