import type { AppMiddleware } from './state';

/**
 * What the HTTP layer knows of the process's life: `shuttingDown` is set once, when a shutdown begins
 * (src/platform/shutdown.ts). From then on readiness answers 503 and every response asks its client to close the
 * connection.
 */
export interface Lifecycle {
  shuttingDown: boolean;
}

export function createLifecycle(): Lifecycle {
  return { shuttingDown: false };
}

/**
 * Outermost middleware: once shutting down, every response, in flight or new, carries `Connection: close`.
 * A keep-alive client then opens its next connection elsewhere (the load balancer has taken this instance
 * out) instead of having a request cut when the connection is finally closed.
 */
export function closeConnectionsWhenStopping(lifecycle: Lifecycle): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      if (lifecycle.shuttingDown) ctx.set('Connection', 'close');
    }
  };
}
