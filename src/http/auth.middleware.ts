import { UnauthenticatedError } from '../errors';
import { loadCaller } from '../services/caller.service';
import type { CallerCache } from '../services/caller-cache';
import type { TokenVerifier, VerifiedToken } from '../services/token-verifier';
import type { AppContext, AppMiddleware } from './state';

/**
 * The request's bearer token, verified once however many times it is asked for: the rate limiter keys
 * requests on its `sub` before authentication runs.
 */
export function verifiedToken(ctx: AppContext, verifier: TokenVerifier): Promise<VerifiedToken> {
  ctx.state.token ??= verifier.verify(ctx.get('Authorization') || undefined, ctx.ip);
  return ctx.state.token;
}

/**
 * Verifies the request's bearer token and sets `ctx.state.caller`; throws 401 or 403 (a 401 also sets
 * `WWW-Authenticate`). REST and GraphQL both authenticate through here and only differ in the error body.
 */
export async function authenticateRequest(ctx: AppContext, verifier: TokenVerifier, callers: CallerCache): Promise<void> {
  // The answer depends on who asks, refusals included: no shared cache may keep it, and a browser's copy is
  // revalidated (ETag) each time (docs/caching.md). A handler may still ask for less (no-store).
  ctx.vary('Authorization');
  ctx.set('Cache-Control', 'private, no-cache');
  try {
    const token = await verifiedToken(ctx, verifier);
    ctx.state.caller = await callers.get(token.sub, () => loadCaller(ctx.state.em, token));
  } catch (err) {
    // RFC 6750: a 401 tells the client which scheme to use.
    if (err instanceof UnauthenticatedError) ctx.set('WWW-Authenticate', 'Bearer realm="svc", error="invalid_token"');
    throw err;
  }
}

/** Protects the REST routes below it; the error middleware writes the error body. */
export function authenticate(verifier: TokenVerifier, callers: CallerCache): AppMiddleware {
  return async (ctx, next) => {
    await authenticateRequest(ctx, verifier, callers);
    await next();
  };
}
