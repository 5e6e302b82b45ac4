import type { ClassConstructor } from 'class-transformer';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { AppContext } from '../http/state';
import type { Logger } from '../logger';
import type { Caller } from '../auth/caller';
import type { CallerCache } from '../auth/caller-cache';
import { ref, type JsonSchema, type RecordClass } from '../outputs/output';

export type { JsonSchema };

/** Where an operation lives (decisions.md section 1). */
export const PREFIXES = {
  svc: '/api/svc/v1',
  internal: '/api/internal/v1',
  credits: '/api/v1',
} as const;
/** The alias prefix of project templates, project statistics and organizations. */
export const ALIAS_PREFIX = '/svc/v1';

interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  em: EntityManager;
  config: Config;
  callers: CallerCache;
  ctx: AppContext;
  /** The request's logger. */
  log: Logger;
}

interface RouteResult {
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
  /**
   * Success status and the schema of its body (`keyed`, `keyedList`); `also`, another success status with the
   * same body (#15 and #27 answer 200 when nothing was new).
   */
  success: {
    status: number; description: string; schema?: JsonSchema; also?: { status: number; description: string };
    /** Other media types of the same answer (issue 13's spreadsheet), by content type. */
    otherMediaTypes?: Record<string, JsonSchema>;
  };
  /** Error statuses this operation may answer besides 400/401/403/404 and those every operation may (413/415 with a body, 429, 500, 503). */
  errors?: number[];
  /** An error status answered with a body other than the REST error body (#33/#34's 404). */
  errorBodies?: Record<number, { description: string; schema: JsonSchema }>;
  handler(input: RouteInput<P, Q, B>): Promise<RouteResult>;
}

/** Helps TypeScript infer the parameter types of a route definition. */
export function route<P extends object = object, Q extends object = object, B extends object = object>(def: RouteDef<P, Q, B>): RouteDef<P, Q, B> {
  return def;
}

/** `{ <key>: <record> }`, the body of a read or write of one record (decisions.md section 2). */
export function keyed(key: string, record: RecordClass): JsonSchema {
  return { type: 'object', required: [key], properties: { [key]: ref(record) } };
}

/** `{ <key>: [<record>] }`; with `paged`, also `next_cursor` and `total_count` when `limit` was sent. */
export function keyedList(key: string, record: RecordClass, paged = false): JsonSchema {
  const properties: Record<string, JsonSchema> = { [key]: { type: 'array', items: ref(record) } };
  if (paged) {
    properties.next_cursor = { type: ['string', 'null'], description: 'Only when `limit` is sent: the `cursor` of the next page, null on the last one' };
    properties.total_count = { type: 'integer', minimum: 0, description: 'Only when `limit` is sent: the number of records of the whole list' };
  }
  return { type: 'object', required: [key], properties };
}
