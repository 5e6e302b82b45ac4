import Router from '@koa/router';
import type { AppState } from './state';
import type { Readiness } from './readiness';

/** Liveness (the process answers) and readiness (the database answers, not shutting down). */
export function healthRoutes(readiness: Readiness): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  // A refusal is a 503 the errors middleware logs at WARN, with the database's error as its cause.
  router.get('/readyz', async (ctx) => {
    await readiness.check();
    ctx.body = { status: 'ready' };
  });
  return router;
}
