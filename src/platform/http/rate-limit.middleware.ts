import { RateLimiterRes } from 'rate-limiter-flexible';
import { TooManyRequestsError, type RateLimitPolicy } from '../errors/errors';
import type { Metrics } from '../metrics';
import { clientKey } from './client-key';
import type { TokenVerifier } from '../auth/token-verifier';
import type { Quota, RateLimiters } from './rate-limiters';
import { verifiedToken } from './auth.middleware';
import type { AppContext, AppMiddleware } from './state';
import { inSpan } from '../telemetry/tracing';

/** Probes of load balancers and orchestrators must never be refused. */
const EXEMPT_PATHS = new Set(['/healthz', '/readyz']);

/** Whole seconds until `ms` from now, at least 1 (Retry-After and `t` are delay-seconds). */
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Adds one quota to the RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11):
 * `RateLimit-Policy: "api";q=600;w=60` and `RateLimit: "api";r=598;t=41`. Fields are Structured Field
 * lists, so a second quota (a sign-in lockout) is appended as a second item.
 */
export function advertise(ctx: AppContext, policy: RateLimitPolicy, remaining: number, resetSeconds: number): void {
  ctx.append('RateLimit-Policy', `"${policy.name}";q=${policy.points};w=${policy.windowSeconds}`);
  ctx.append('RateLimit', `"${policy.name}";r=${Math.max(0, remaining)};t=${resetSeconds}`);
}

/** The quota key of a verified token's subject, whatever the transport (HTTP here, WebSocket connections too). */
export const subjectKey = (sub: string) => `sub:${sub}`;

/** The caller a request is counted against: the verified token's subject, else the client address. */
async function callerKey(ctx: AppContext, verifier: TokenVerifier): Promise<string> {
  if (ctx.get('Authorization')) {
    try {
      return subjectKey((await verifiedToken(ctx, verifier)).sub);
    } catch {
      // Refused by authentication further down; meanwhile it is an anonymous request of its address.
    }
  }
  return `ip:${clientKey(ctx.ip)}`;
}

async function consume(ctx: AppContext, quota: Quota, key: string, what: string): Promise<void> {
  let res: RateLimiterRes;
  try {
    // Its own span: the store's round trip (PostgreSQL or Redis) shows apart from the request's work.
    res = await inSpan('rate-limit', { 'rate_limit.scope': what }, () => quota.limiter.consume(key));
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) {
      // Both the store and the in-memory fallback failed: serve rather than refuse everyone.
      ctx.state.log.warn({ err }, 'rate limit not checked');
      return;
    }
    const retryAfter = seconds(err.msBeforeNext);
    throw new TooManyRequestsError(
      `Too many requests: at most ${quota.points} every ${quota.windowSeconds} seconds ${what}; retry in ${retryAfter} seconds`,
      retryAfter,
      quota,
    );
  }
  advertise(ctx, quota, res.remainingPoints, seconds(res.msBeforeNext));
}

/** A caller's GraphQL cost budget, as far as this instance knows it (src/platform/graphql/cost.ts). */
export interface GraphQLBudgetDoor {
  /** Throws 429 (with its policy) when the caller's budget is known to be spent. */
  check(key: string, cost: number): void;
}

/**
 * One rate limit mechanism for every route (docs/rate-limits.md): `/auth/token` counts requests per client
 * address, everything else per caller (REST and GraphQL share one quota), and a GraphQL request of a caller whose
 * cost budget is known to be spent is refused here, before any other work (a flood of them costs the least). Every
 * answer carries the RateLimit headers; a 429, whoever throws it (here, the GraphQL cost plugin, or the sign-in
 * lockout of the token endpoint), names its policy in them, and the errors middleware writes the body in the
 * endpoint's shape with Retry-After.
 */
export function rateLimit(limiters: RateLimiters, verifier: TokenVerifier, metrics: Metrics, graphqlBudget?: GraphQLBudgetDoor): AppMiddleware {
  return async (ctx, next) => {
    // Preflights carry no credentials and do no work; probes must always get through.
    if (ctx.method === 'OPTIONS' || EXEMPT_PATHS.has(ctx.path)) return next();
    try {
      if (ctx.path === '/auth/token') await consume(ctx, limiters.token, `ip:${clientKey(ctx.ip)}`, 'from one address');
      else {
        const key = await callerKey(ctx, verifier);
        await consume(ctx, limiters.api, key, 'per caller');
        if (graphqlBudget && ctx.path === '/graphql' && key.startsWith('sub:')) graphqlBudget.check(key, 1);
      }
      await next();
    } catch (err) {
      if (err instanceof TooManyRequestsError) {
        if (err.policy) advertise(ctx, err.policy, 0, err.retryAfterSeconds);
        metrics.rateLimitRejections.inc({ policy: err.policy?.name ?? 'other' });
      }
      throw err;
    }
  };
}
