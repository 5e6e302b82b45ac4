import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ValidationError } from '../errors';
import { isUuid } from './uuid';

export interface Cursor {
  /** created_at, ISO */
  c: string;
  /** id */
  i: string;
}

/** Opaque cursor over (created_at, id), the stable order of every paged list. */
export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify({ c: createdAt.toISOString(), i: id })).toString('base64url');
}

/** A timestamp as encodeCursor writes it, in the years PostgreSQL and toISOString share (1-9999). */
function isCursorTime(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return false;
  const year = at.getUTCFullYear();
  return year >= 1 && year <= 9999 && at.toISOString() === value;
}

/** The cursor's (created_at, id); a value encodeCursor could not have written is a 400, never a failed SQL cast. */
export function decodeCursor(cursor: string, field = 'cursor'): Cursor {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor> | null;
    if (v && isCursorTime(v.c) && isUuid(v.i)) return { c: v.c, i: v.i };
  } catch { /* fall through */ }
  throw new ValidationError([{ field, message: 'is not a cursor given by this service' }]);
}

export const MAX_PAGE_SIZE = 500;

/** Parses a page size from a query string or GraphQL argument. */
export function pageSize(value: string | number | undefined | null, field = 'limit'): number | null {
  if (value === undefined || value === null) return null;
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
    throw new ValidationError([{ field, message: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` }]);
  }
  return n;
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface KeysetOptions {
  /** Page size; every record when absent. */
  first?: number | null;
  /** Cursor of the last record of the previous page. */
  after?: string | null;
  /** Name of the cursor field in errors (`after` in GraphQL, `cursor` in REST). */
  afterField?: string;
  order: 'asc' | 'desc';
  populate?: string[];
}

/**
 * One page of records in (created_at, id) order after a cursor: the page and, when paged, the total in two
 * statements, whatever the page size.
 */
export async function keysetPage<T extends { createdAt: Date; id: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  opts: KeysetOptions,
): Promise<Page<T>> {
  const totalCount = opts.first ? await em.count(entity, where) : -1;
  let paged = where;
  if (opts.after) {
    const c = decodeCursor(opts.after, opts.afterField ?? 'cursor');
    const at = new Date(c.c);
    const op = opts.order === 'desc' ? '$lt' : '$gt';
    paged = { $and: [where, { $or: [{ createdAt: { [op]: at } }, { createdAt: at, id: { [op]: c.i } }] }] } as FilterQuery<T>;
  }
  const items = await em.find(entity, paged, {
    populate: (opts.populate ?? []) as never,
    orderBy: { createdAt: opts.order, id: opts.order } as never,
    limit: opts.first ? opts.first + 1 : undefined,
  }) as T[];
  const hasNextPage = !!opts.first && items.length > opts.first;
  if (hasNextPage) items.pop();
  const last = items[items.length - 1];
  return {
    items,
    totalCount: totalCount >= 0 ? totalCount : items.length,
    hasNextPage,
    endCursor: last ? encodeCursor(last.createdAt, last.id) : null,
  };
}
