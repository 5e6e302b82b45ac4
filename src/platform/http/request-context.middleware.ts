import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { watchingConnectionCuts } from '../database/limits';
import { finalStatus, type AppMiddleware } from './state';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Outermost middleware: a request id (the caller's X-Request-Id when sane, else a new UUID) on the
 * response and on every log line, one access log line per request, and a per-request entity manager. A request
 * is one unit of work for the connections it gives up (src/platform/database/limits.ts): how its errors are mapped.
 *
 * The entity manager and the request's child logger are made when first used: a request refused before any work
 * (a rate limit, a spent budget: thousands a second from a flooding client) makes neither (a fork is tens of
 * kilobytes of unit of work and identity map).
 */
export function requestContext(orm: MikroORM, log: Logger): AppMiddleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    lazily(ctx.state, 'log', () => log.child({ request_id: requestId }));
    lazily(ctx.state, 'em', () => orm.em.fork());
    ctx.set('X-Request-Id', requestId);
    try {
      await watchingConnectionCuts(next);
    } finally {
      log.info({
        request_id: requestId,
        method: ctx.method,
        path: ctx.path,
        status: finalStatus(ctx),
        duration_ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
      }, 'request');
    }
  };
}

/** A property made by `make` when first read, and replaced when written (the idempotency layer swaps `em`). */
function lazily<T extends object, K extends keyof T>(target: T, key: K, make: () => T[K]): void {
  let value: T[K] | undefined;
  Object.defineProperty(target, key, {
    configurable: true,
    enumerable: true,
    get: () => (value ??= make()),
    set: (v: T[K]) => { value = v; },
  });
}
