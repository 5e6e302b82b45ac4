import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from './config';
import type { Caller } from './auth/caller';
import type { CallerCache } from './auth/caller-cache';
import type { Logger } from './logger';

/** What a service needs for one request: the request's entity manager and the authenticated caller. */
export interface ServiceContext {
  /** Where the request reads: the primary's, or a replica's for read-only work (src/platform/http/read-routing.ts). */
  em: EntityManager;
  /**
   * The primary's, whatever `em` is: for the few reads that must agree with the caller's rights, which are read
   * there (the caller's own user record, of a user created a moment ago). Absent: `em` is the primary's.
   */
  primaryEm?: EntityManager;
  caller: Caller;
  config: Config;
  /**
   * The callers this instance keeps, for a service that changes its caller's own rights or current organization:
   * it forgets the kept one at once (the database's notification arrives a few milliseconds later, after the
   * caller's next request may have started). Absent where no request's caller is kept (subscriptions).
   */
  callers?: CallerCache;
  /** The request's logger (its lines carry the request id); absent outside a request (subscriptions). */
  log?: Logger;
}
