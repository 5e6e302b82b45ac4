import type { EntityManager } from '@mikro-orm/postgresql';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Caller } from '../services/caller';
import type { VerifiedToken } from '../services/token-verifier';

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
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;
