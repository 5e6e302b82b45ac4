import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { Caller } from './caller';

/** What a service needs for one request: the request's entity manager and the authenticated caller. */
export interface ServiceContext {
  em: EntityManager;
  caller: Caller;
  config: Config;
}
