import { setUnitOfWorkCaller } from '../database/limits';
import { UnauthenticatedError } from '../errors/errors';
import { loadCaller } from '../auth/caller.service';
import type { CallerCache } from '../auth/caller-cache';
import type { TokenVerifier, VerifiedToken } from '../auth/token-verifier';
import type { AppContext, AppMiddleware } from './state';

/**
 * The request's bearer token, verified once however many times it is asked for: the rate limiter keys
 * requests on its `sub` before authentication runs.
 */
export function verifiedToken(ctx: AppContext, verifier: TokenVerifier): Promise<VerifiedToken> {
  ctx.state.token ??= verifier.verify(ctx.get('Authorization') || undefined, ctx.ip);
  return ctx.state.token;
}

/** Runs one step of authentication; a 401 also sets `WWW-Authenticate` (RFC 6750: which scheme to use). */
async function refusing<T>(ctx: AppContext, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof UnauthenticatedError) ctx.set('WWW-Authenticate', 'Bearer realm="svc", error="invalid_token"');
    throw err;
  }
}

/**
 * First step of authentication: verifies the request's bearer token, without reading the caller's rights;
 * throws 401 or 403. Cheap (no statement): GraphQL runs it before an operation waits for its turn.
 */
export async function verifyRequest(ctx: AppContext, verifier: TokenVerifier): Promise<VerifiedToken> {
  // The answer depends on who asks, refusals included: no shared cache may keep it, and a browser's copy is
  // revalidated (ETag) each time (docs/caching.md). A handler may still ask for less (no-store).
  ctx.vary('Authorization');
  ctx.set('Cache-Control', 'private, no-cache');
  return refusing(ctx, () => verifiedToken(ctx, verifier));
}

/**
 * Second step: sets `ctx.state.caller`, the rights of the verified token's user (kept or looked up); throws 401
 * or 403. GraphQL runs it once the operation's turn has come, so that an operation that waited runs with the
 * rights of when it runs, not of when it arrived.
 */
export async function identifyCaller(ctx: AppContext, token: VerifiedToken, callers: CallerCache): Promise<void> {
  ctx.state.caller = await refusing(ctx, () => callers.get(token.sub, () => loadCaller(ctx.state.em, token)));
  // Its commits are now this caller's (read-your-writes, src/platform/database/replicas.ts).
  setUnitOfWorkCaller(ctx.state.caller.userId);
}

/**
 * Both steps at once: REST and GraphQL authenticate through them and only differ in the error body and in what
 * runs between the two.
 */
async function authenticateRequest(ctx: AppContext, verifier: TokenVerifier, callers: CallerCache): Promise<void> {
  await identifyCaller(ctx, await verifyRequest(ctx, verifier), callers);
}

/** Protects the REST routes below it; the error middleware writes the error body. */
export function authenticate(verifier: TokenVerifier, callers: CallerCache): AppMiddleware {
  return async (ctx, next) => {
    await authenticateRequest(ctx, verifier, callers);
    await next();
  };
}
