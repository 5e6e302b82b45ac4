import { E_TIMEOUT, Semaphore, withTimeout } from 'async-mutex';
import { ServiceUnavailableError } from '../errors/errors';
import type { AppMiddleware } from '../http/state';

/**
 * At most `max` GraphQL operations of this instance are parsed, executed and serialized at once; the others
 * wait in arrival order, at most `queueTimeoutMs`, then get 503 + Retry-After like any other exhausted bound
 * (docs/faults.md). An operation whose client disconnected while it waited is not run.
 *
 * Why: the work is CPU-bound on a few cores, so running 16 dashboard queries at once answers no more of them per
 * second than running 4, but holds 16 partly built answers (each one's rows, result tree and JSON) in memory at
 * the same time: the peak resident set grew with the number of clients (docs/benchmarks.md, dashboard).
 */
export function operationSlots(max: number, queueTimeoutMs: number): AppMiddleware {
  const slots = withTimeout(new Semaphore(max), queueTimeoutMs);
  return async (ctx, next) => {
    let release: () => void;
    try {
      [, release] = await slots.acquire();
    } catch (err) {
      if (err === E_TIMEOUT) throw new ServiceUnavailableError('The service is busy: too many GraphQL operations are waiting');
      throw err;
    }
    // A client that went away while its operation waited gets no answer: running the operation anyway would spend
    // the turn others wait for and, for a mutation, change data the client will believe unchanged and send again.
    if (ctx.req?.socket?.destroyed) {
      release();
      return;
    }
    try {
      await next();
    } finally {
      release();
    }
  };
}
