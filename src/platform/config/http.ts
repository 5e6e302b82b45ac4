/** What HTTP serves and to whom: the browsers' origins, the rate limits, /metrics (src/platform/config.ts composes them). */
import { DAY, HTTP, group, intVar, oneOfVar, refuse, setting, strVar, urlVar, type Setting } from '../env';

/**
 * CORS_ORIGINS: a comma-separated list of origins, or `*`. Unset, development and tests allow the loopback origins
 * (a front end's dev server on another port) and production allows none. Each entry is checked and written the way
 * a browser sends its Origin header, so that a comparison of strings decides.
 */
export function cors(production: boolean): Setting<{
  /** Origins as browsers send them (`scheme://host[:port]`), or '*' for any origin. */
  origins: string[] | '*';
  /** Also any http(s) origin on localhost, 127.0.0.1 or [::1], whatever its port: the default outside production. */
  loopback: boolean;
}> {
  const unset = { origins: [], loopback: !production };
  return setting('CORS_ORIGINS', unset, (text, refused) => {
    const raw = text.trim();
    if (raw === '') return unset;
    const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    if (entries.includes('*')) return entries.length > 1 ? refused(`must be either * or a list of origins, got "${raw}"`) : { origins: '*', loopback: false };
    const origins: string[] = [];
    for (const entry of entries) {
      let parsed: URL | null = null;
      try {
        parsed = new URL(entry);
      } catch {
        // refused below
      }
      const bare = parsed && HTTP.includes(parsed.protocol) && !parsed.username && !parsed.password
        && parsed.pathname === '/' && !parsed.search && !parsed.hash && !entry.endsWith('?') && !entry.endsWith('#');
      if (!parsed || !bare) return refused(`must list origins such as https://app.example.com (scheme, host and port only), got "${entry}"`);
      origins.push(parsed.origin);
    }
    return { origins: [...new Set(origins)], loopback: false };
  });
}

/** Request quotas and sign-in lockouts (docs/rate-limits.md). Windows stay below 24 days: the in-memory fallback keeps them in timers. */
export function rateLimit() {
  return group({
    redisUrl: urlVar('REDIS_URL', null, ['redis:', 'rediss:']),
    store: oneOfVar('RATE_LIMIT_STORE', null, ['postgres', 'redis', 'memory']),
    /** Prefix of every counter key, so that deployments (or test runs) can share one Redis. */
    keyPrefix: setting('RATE_LIMIT_KEY_PREFIX', 'rl', (raw, refused) => (/^[A-Za-z0-9_.:-]{1,64}$/.test(raw) ? raw
      : refused(`must be 1 to 64 letters, digits or _ . : -, got "${raw}"`))),
    /** Longest wait for the store before counting in this process's memory instead. */
    storeTimeoutMs: intVar('RATE_LIMIT_STORE_TIMEOUT_MS', 500, 10, 60000),
    /**
     * RATE_LIMIT_MERGE_MS: request quotas (api, token, graphql-cost) on PostgreSQL are counted in this instance's
     * memory and merged into the store at most this often, one statement for every key (src/platform/http/merged-counts.ts);
     * 0: one store statement per count, as before.
     */
    mergeMs: intVar('RATE_LIMIT_MERGE_MS', 1000, 0, 60000),
    /** Requests per caller (token `sub`; anonymous requests per client address) on REST and GraphQL. */
    api: group({
      points: intVar('RATE_LIMIT_API_POINTS', 600, 1, 1e9),
      windowSeconds: intVar('RATE_LIMIT_API_WINDOW_SECONDS', 60, 1, DAY),
    }),
    /** Requests per client address to the token endpoint. */
    token: group({
      points: intVar('RATE_LIMIT_TOKEN_POINTS', 100, 1, 1e9),
      windowSeconds: intVar('RATE_LIMIT_TOKEN_WINDOW_SECONDS', 60, 1, DAY),
    }),
    /** Cost of GraphQL operations per caller (src/platform/graphql/cost.ts). */
    graphqlCost: group({
      points: intVar('RATE_LIMIT_GRAPHQL_COST_POINTS', 1_000_000, 1, 1e12),
      windowSeconds: intVar('RATE_LIMIT_GRAPHQL_COST_WINDOW_SECONDS', 60, 1, DAY),
    }),
    login: group({
      /** Consecutive failed sign-ins of one username from one address before a lockout. */
      maxFailuresPerUserAddress: intVar('LOGIN_MAX_FAILURES_PER_USER_ADDRESS', 10, 1, 1e9),
      /** Failed sign-ins of one username from any address before a lockout. */
      maxFailuresPerUser: intVar('LOGIN_MAX_FAILURES_PER_USER', 30, 1, 1e9),
      /** Failed sign-ins from one address (any username) before the address is refused for a whole window. */
      maxFailuresPerAddress: intVar('LOGIN_MAX_FAILURES_PER_ADDRESS', 100, 1, 1e9),
      /** How long a failed sign-in counts. */
      failureWindowSeconds: intVar('LOGIN_FAILURE_WINDOW_SECONDS', DAY, 1, 7 * DAY),
      lockoutSeconds: intVar('LOGIN_LOCKOUT_SECONDS', 900, 1, DAY),
    }),
  }).transform(({ store, ...read }, ctx) => {
    const chosen = store ?? (read.redisUrl ? 'redis' : 'postgres');
    if (chosen === 'redis' && !read.redisUrl) return refuse(ctx, 'RATE_LIMIT_STORE=redis needs REDIS_URL');
    return {
      /** Where counters live: PostgreSQL (shared by instances on one database), Redis (the default with a REDIS_URL), or this process. */
      store: chosen,
      ...read,
    };
  });
}

/** Where /metrics is served (README "Operate"). */
export function metrics(main: { port: number; host: string }, production: boolean) {
  return group({
    /** A listener of its own for /metrics (and nothing else); null: none. */
    port: intVar('METRICS_PORT', null, 0, 65535).transform((port, ctx) => (port !== null && port === main.port && port !== 0
      ? refuse(ctx, `METRICS_PORT must differ from PORT (${port})`) : port)),
    host: strVar('METRICS_HOST', main.host),
    /** Required as `Authorization: Bearer <token>` wherever /metrics is served. */
    token: setting<string | null>('METRICS_TOKEN', null, (raw, refused) => (/^[\x21-\x7e]{16,256}$/.test(raw) ? raw
      : refused('must be 16 to 256 visible ASCII characters'))),
  }).transform((read) => ({
    ...read,
    /**
     * /metrics on the service's own port: with a token, or outside production; never open to the public in
     * production, where a port or a token must be configured.
     */
    onMainPort: read.port === null && (read.token !== null || !production),
  }));
}
