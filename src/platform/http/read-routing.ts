import { BadRequestError } from '../errors/errors';
import { writesHere } from '../database/limits';
import { parseLsn, replicaFault, type ReadRoute, type ReadRouter } from '../database/replicas';
import type { Metrics } from '../metrics';
import type { AppContext, AppMiddleware } from './state';

/** The header of read-your-writes (src/platform/database/replicas.ts): a write's answer carries it; a later request may send it. */
const CONSISTENCY_HEADER = 'X-Consistency-Token';

/**
 * Read-your-writes for every request, REST and GraphQL alike (README, "Scale out"):
 *
 * - an `X-Consistency-Token` the client sent is checked (a malformed one is a 400 in the endpoint's shape) and
 *   held to: the request's reads see at least that position;
 * - `ctx.state.reads` routes the request's read-only work (REST GETs, GraphQL queries) to a replica that has what
 *   the caller must see, else to the primary;
 * - a request that committed a write ends with its position, kept for the caller on every instance and sent as
 *   `X-Consistency-Token`. A failure there (the primary gone just after the commit) loses the header, never the
 *   write's answer.
 *
 * Without replicas only the check of a sent token remains.
 */
export function readRouting(router: ReadRouter | null, metrics: Metrics): AppMiddleware {
  return async (ctx, next) => {
    const sent = ctx.get(CONSISTENCY_HEADER);
    const token = sent ? parseLsn(sent) : null;
    if (sent && token === null) {
      throw new BadRequestError(`${CONSISTENCY_HEADER} must be a position such as 0/16B3748, as the answer to a write gave it`);
    }
    if (!router) return next();
    ctx.state.reads = {
      route: () => {
        const route = router.route(ctx.state.em, ctx.state.caller?.userId ?? null, token);
        metrics.databaseReads.inc({ target: route.replica?.name ?? 'primary' });
        return route;
      },
      failed: (route: ReadRoute, err: unknown) => {
        if (route.replica) router.failed(route.replica, err);
        metrics.databaseReads.inc({ target: 'primary' });
      },
    };
    try {
      await next();
    } finally {
      const writes = writesHere();
      if (writes) await answerPosition(ctx, router, writes.told);
    }
  };
}

async function answerPosition(ctx: AppContext, router: ReadRouter, told: boolean): Promise<void> {
  const userId = ctx.state.caller?.userId ?? null;
  try {
    ctx.set(CONSISTENCY_HEADER, await router.afterWrite(ctx.state.em, userId, told));
  } catch (err) {
    // The primary failed right after the commit: this instance sends the caller's reads there for the window.
    if (userId) router.lostWrite(userId);
    ctx.state.log.warn({ err }, 'the position of a committed write could not be read: no X-Consistency-Token on its answer');
  }
}

/**
 * Runs `read` where the request's reads go; when a replica fails under it (src/platform/database/replicas.ts, replicaFault), once
 * more on the primary. Without replicas, on the primary.
 */
export async function readOnly<T>(ctx: AppContext, read: (route: ReadRoute) => Promise<T>): Promise<T> {
  const reads = ctx.state.reads;
  if (!reads) return read({ em: ctx.state.em, replica: null });
  const route = reads.route();
  try {
    return await read(route);
  } catch (err) {
    if (!route.replica || !replicaFault(err)) throw err;
    reads.failed(route, err);
    return read({ em: ctx.state.em, replica: null });
  }
}
