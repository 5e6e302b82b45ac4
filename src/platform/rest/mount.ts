import Router from '@koa/router';
import type { EntityManager } from '@mikro-orm/postgresql';
import { jsonBody } from '../http/body.middleware';
import { readOnly } from '../http/read-routing';
import { authenticate } from '../http/auth.middleware';
import { idempotency } from '../http/idempotency';
import { admitted, type Admission } from '../http/admission';
import type { AppMiddleware, AppState } from '../http/state';
import type { Config } from '../config';
import type { TokenVerifier } from '../auth/token-verifier';
import type { CallerCache } from '../auth/caller-cache';
import { validateInput, validateRestInput, validateRestQuery, withRestFieldNames } from '../validation/validation';
import { ALIAS_PREFIX, PREFIXES, type RouteDef } from './route';

/** The full paths an operation is served at. */
export function routePaths(r: RouteDef): string[] {
  return [PREFIXES[r.prefix] + r.path, ...(r.alias ? [ALIAS_PREFIX + r.path] : [])];
}

/** Mounts route definitions: authentication, a turn of the route's cost class, a write's idempotency key, then validation of path, query and body, then the handler. */
export function mountRoutes(routes: RouteDef[], config: Config, verifier: TokenVerifier, callers: CallerCache, admission: Admission): Router<AppState> {
  const router = new Router<AppState>();
  const auth = authenticate(verifier, callers);
  const body = jsonBody();
  const noBody: AppMiddleware = (_ctx, next) => next();
  // A write sent with an Idempotency-Key runs with its stored answer in one transaction (after authentication: keys
  // are the caller's; before validation, which throws: a refused request stores nothing).
  const keyed = idempotency({ ttlSeconds: config.idempotencyKeyTtlSeconds });
  // The work runs in a turn of its cost class, once the caller is known (a refused token costs no turn).
  const reads = admitted(admission, 'rest-read');
  const writes = admitted(admission, 'rest-write');
  for (const r of routes) {
    // A read waits for a read turn; a write for a write turn, then runs under its idempotency key.
    const turn = r.method === 'get' ? [reads] : [writes, keyed];
    const handler: AppMiddleware = async (ctx) => {
      const params = r.params ? await validateInput(r.params, { ...ctx.params }) : {};
      const query = await validateRestQuery(r.query, ctx.query);
      let input: object = {};
      if (r.body) {
        // No body at all is validated as `{}`: optional bodies pass, required fields are named.
        input = await validateRestInput(r.body, ctx.request.body ?? {});
      }
      // Services name fields as the input classes do (camelCase); REST callers sent snake_case.
      const run = (em: EntityManager) => r.handler({ params, query, body: input, caller: ctx.state.caller!, em, primaryEm: ctx.state.em, config, callers, ctx, log: ctx.state.log } as never);
      // A GET is read-only work: a replica may serve it (src/platform/http/read-routing.ts).
      const result = await (r.method === 'get' ? readOnly(ctx, (route) => run(route.em)) : run(ctx.state.em))
        .catch(withRestFieldNames);
      ctx.status = result.status ?? r.success.status;
      if (result.attachment) ctx.attachment(result.attachment);
      if (result.type) ctx.type = result.type;
      if (ctx.status !== 204) ctx.body = result.body;
    };
    for (const path of routePaths(r)) router[r.method](path, auth, r.body ? body : noBody, ...turn, handler);
  }
  return router;
}
