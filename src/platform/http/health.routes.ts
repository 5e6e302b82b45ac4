import Router from '@koa/router';
import type { AppState } from './state';
import type { Readiness } from './readiness';
import type { Admission } from './admission';
import type { PrimaryState } from '../database/primary-watch';
import type { ChangeCaptureStatus } from '../events/change-capture';

/** /loadz answers 503 from this share of a class's capacity (running and waiting) on: before refusals start. */
const OVERLOADED_AT = 0.75;

/**
 * Liveness (the process answers), readiness (the database answers, not shutting down) and load: /loadz tells a
 * balancer how busy the instance is (docs/faults.md, "Overload"), 503 once a class is three quarters full, so that
 * new work goes elsewhere before this instance refuses most of it. Readiness stays about being able to serve.
 */
export function healthRoutes(readiness: Readiness, admission: Admission, primary: () => PrimaryState = () => ({ writable: true, reason: null, cluster: null }),
  changes: (() => ChangeCaptureStatus) | null = null): Router<AppState> {
  const router = new Router<AppState>();
  // Liveness, and what the instance cannot do right now without being unready for it (docs/subscriptions.md).
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok', ...(changes ? { changes: changes() } : {}) };
  });
  // A refusal is a 503 the errors middleware logs at WARN, with the database's error as its cause.
  router.get('/readyz', async (ctx) => {
    await readiness.check();
    ctx.body = { status: 'ready' };
  });
  router.get('/loadz', (ctx) => {
    const loads = admission.loads();
    ctx.set('Cache-Control', 'no-store');
    ctx.status = loads.load >= OVERLOADED_AT ? 503 : 200;
    // Whether writes can be served is said too: a balancer may weigh it; readiness already fails on it.
    const { writable, reason } = primary();
    ctx.body = { status: loads.load >= OVERLOADED_AT ? 'overloaded' : 'ok', ...loads, database: { writable, ...(reason ? { reason } : {}) } };
  });
  return router;
}
