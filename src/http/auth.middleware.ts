import { UnauthenticatedError } from '../errors';
import { loadCaller } from '../services/caller.service';
import type { TokenVerifier } from '../services/token-verifier';
import type { AppMiddleware } from './state';

/** Protects the routes below it: verifies the bearer token and sets `ctx.state.caller`. */
export function authenticate(verifier: TokenVerifier): AppMiddleware {
  return async (ctx, next) => {
    try {
      const token = await verifier.verify(ctx.get('Authorization') || undefined, ctx.ip);
      ctx.state.caller = await loadCaller(ctx.state.em, token);
    } catch (err) {
      // RFC 6750: a 401 tells the client which scheme to use; the error middleware writes the body.
      if (err instanceof UnauthenticatedError) ctx.set('WWW-Authenticate', 'Bearer realm="svc", error="invalid_token"');
      throw err;
    }
    await next();
  };
}
