import Router from '@koa/router';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ServiceUnavailableError } from '../errors';
import type { Lifecycle } from '../http/lifecycle';
import type { AppState } from '../http/state';

/** Liveness (the process answers) and readiness (the database answers, and no shutdown has begun). */
export function healthRoutes(orm: MikroORM, lifecycle: Lifecycle): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    // From the signal on, load balancers must stop sending traffic here, whatever the database says.
    if (lifecycle.shuttingDown) throw new ServiceUnavailableError('The service is shutting down');
    try {
      await orm.em.getConnection().execute('select 1');
    } catch (err) {
      ctx.state.log.warn({ err }, 'readiness check failed');
      throw new ServiceUnavailableError('The database is unavailable');
    }
    ctx.body = { status: 'ready' };
  });
  return router;
}
