import type { EntityManager } from '@mikro-orm/postgresql';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Caller } from '../auth/caller';
import type { VerifiedToken } from '../auth/token-verifier';
import type { ReadRoute } from '../database/replicas';
import type { CostContext } from '../graphql/cost';

export type { ReadRoute };

/** What every request carries through the middleware chain. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** A fork of the ORM's entity manager: one identity map per request. */
  em: EntityManager;
  /** Set by the authentication middleware on protected routes. */
  caller?: Caller;
  /** The bearer token's verification, done once per request (see verifiedToken in auth.middleware.ts). */
  token?: Promise<VerifiedToken>;
  /**
   * Where the request's read-only work may run (src/platform/http/read-routing.ts): a replica that has what the caller
   * must see, else the primary (`em`). Absent without replicas.
   */
  reads?: RequestReads;
  /** A GraphQL request's caller key for its cost budget, and what its operation cost (src/platform/graphql/cost.ts). */
  graphqlCost?: CostContext['cost'];
}

/** The read routing of one request. */
export interface RequestReads {
  /** Chooses where to read, once the caller is known; counts it. */
  route(): ReadRoute;
  /** The replica of `route` failed under the request: it is skipped, and the reads go to the primary. */
  failed(route: ReadRoute, err: unknown): void;
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;

/** nginx's status for a request whose client closed the connection before it was answered. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * The status a request ends with, as the access log and the metrics count it: 499 when its client left before the
 * answer (a request given up while it waited for its turn ran nothing, and is not a missing route's 404).
 */
export function finalStatus(ctx: AppContext): number {
  return ctx.req?.socket?.destroyed && !ctx.res?.headersSent ? CLIENT_CLOSED_REQUEST : ctx.status;
}
