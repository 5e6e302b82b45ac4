import Router from '@koa/router';
import type { Config } from '../../platform/config';
import { formBody } from '../../platform/http/body.middleware';
import type { AppState } from '../../platform/http/state';
import { IdentityProviderService, OAuthError, type TokenRequest } from './identity-provider.service';
import type { LoginThrottle } from './login-throttle';

/**
 * The client id of HTTP Basic client authentication with an empty secret (RFC 6749 section 2.3.1), the way
 * Swagger UI's "Authorize" sends it by default; the client is public, a secret would be refused.
 */
function basicClientId(header: string): string | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0 || colon < decoded.length - 1) return undefined;
  try {
    return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The development identity provider: token endpoint, JWKS and OpenID discovery. */
export function authRoutes(config: Config, throttle: LoginThrottle): Router<AppState> {
  const router = new Router<AppState>();
  const idp = (ctx: { state: AppState }) => new IdentityProviderService(ctx.state.em, config, throttle);

  const form = formBody();
  router.post('/auth/token', async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    // RFC 6749 section 4.3.2: the token request is a form; anything else would read as a missing client_id.
    if (!ctx.is('application/x-www-form-urlencoded')) {
      ctx.status = 400;
      ctx.body = { error: 'invalid_request', error_description: 'The token request must be a form (application/x-www-form-urlencoded)' };
      return;
    }
    return form(ctx, next);
  }, async (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const form: TokenRequest = {};
    for (const key of ['grant_type', 'client_id', 'username', 'password', 'scope', 'refresh_token'] as const) {
      if (typeof body[key] === 'string') form[key] = body[key] as string;
    }
    form.client_id ??= basicClientId(ctx.get('Authorization'));
    try {
      ctx.body = await idp(ctx).token(form, ctx.ip);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      ctx.status = err.status;
      ctx.body = { error: err.error, error_description: err.description };
    }
  });
  router.get('/auth/jwks', async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=60');
    ctx.body = await idp(ctx).jwks();
  });
  router.get('/.well-known/openid-configuration', (ctx) => {
    ctx.body = idp(ctx).discovery();
  });
  return router;
}
