import type { ClassConstructor } from 'class-transformer';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { AppContext } from '../http/state';
import type { Caller } from '../services/caller';

/** Where an operation lives (decisions.md section 1). */
export const PREFIXES = {
  svc: '/api/svc/v1',
  internal: '/api/internal/v1',
  credits: '/api/v1',
} as const;
/** The alias prefix of project templates, project statistics and organizations. */
export const ALIAS_PREFIX = '/svc/v1';

export type JsonSchema = Record<string, unknown>;

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  em: EntityManager;
  config: Config;
  ctx: AppContext;
}

export interface RouteResult {
  status?: number;
  body: unknown;
  /** A body that is not JSON: its media type. */
  type?: string;
  /** Answered as a download (`Content-Disposition: attachment`) under this file name. */
  attachment?: string;
}

/** One REST operation: the single definition its validation, handler and OpenAPI entry come from. */
export interface RouteDef<P extends object = object, Q extends object = object, B extends object = object> {
  /** Operation number in interface.md (1-35); absent for an extension beside the interface (issue 13's leveling). */
  operation?: number;
  operationId: string;
  method: 'get' | 'post' | 'put' | 'delete';
  prefix: keyof typeof PREFIXES;
  /** Koa path below the prefix: `/projects/:projectId`. */
  path: string;
  /** Also served under /svc/v1. */
  alias?: boolean;
  summary: string;
  /** More than the summary says, for the reference page. */
  description?: string;
  tag: string;
  /** Path parameters (camelCase, as in the path). */
  params?: ClassConstructor<P>;
  /** Query parameters (snake_case on the wire). */
  query?: ClassConstructor<Q>;
  /** JSON body (snake_case on the wire, camelCase in the class). */
  body?: ClassConstructor<B>;
  /** A body may be left out entirely (then validated as `{}`). */
  bodyOptional?: boolean;
  /** Success status and what the body holds. */
  success: { status: number; description: string; schema?: JsonSchema; otherMediaTypes?: Record<string, JsonSchema> };
  /** Error statuses this operation may answer besides 400/401/403/404. */
  errors?: number[];
  handler(input: RouteInput<P, Q, B>): Promise<RouteResult>;
}

/** Helps TypeScript infer the parameter types of a route definition. */
export function route<P extends object = object, Q extends object = object, B extends object = object>(def: RouteDef<P, Q, B>): RouteDef<P, Q, B> {
  return def;
}
