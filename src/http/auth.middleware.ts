import { loadCaller } from '../services/caller.service';
import type { TokenVerifier } from '../services/token-verifier';
import type { AppMiddleware } from './state';

/** Protects the routes below it: verifies the bearer token and sets `ctx.state.caller`. */
export function authenticate(verifier: TokenVerifier): AppMiddleware {
  return async (ctx, next) => {
    const token = await verifier.verify(ctx.get('Authorization') || undefined, ctx.ip);
    ctx.state.caller = await loadCaller(ctx.state.em, token);
    await next();
  };
}
