import Router from '@koa/router';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ServiceUnavailableError } from '../errors';
import type { AppState } from '../http/state';

/** Liveness (the process answers) and readiness (the database answers). */
export function healthRoutes(orm: MikroORM): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
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
