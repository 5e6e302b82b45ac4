import type { EntityManager } from '@mikro-orm/postgresql';
import { ValidationError } from '../errors/errors';
import { isUuid } from './uuid';
import { formatTimestamp, parseTimestamp, type Time } from '../values/time';

export interface Cursor {
  /** created_at, ISO 8601 to the microsecond (a cursor written before, to the millisecond, still reads) */
  c: string;
  /** id */
  i: string;
}

/**
 * Opaque cursor over (created_at, id), the stable order of every paged list. The time to the microsecond, as the
 * row has it: rows created within one millisecond on both sides of a page's end are neither skipped nor repeated.
 */
export function encodeCursor(createdAt: Time, id: string): string {
  return Buffer.from(JSON.stringify({ c: formatTimestamp(createdAt), i: id })).toString('base64url');
}

/** A timestamp as encodeCursor writes it (or wrote it, to the millisecond), in the years PostgreSQL and Date share (1-9999). */
function isCursorTime(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.(\d{3}|\d{6})Z$/.test(value)) return false;
  const at = parseTimestamp(value);
  if (!at) return false;
  const year = at.getUTCFullYear();
  return year >= 1 && year <= 9999 && formatTimestamp(at).startsWith(value.slice(0, -1));
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
/** Page size of a GraphQL list asked without `first` (REST lists without `limit` answer every record, as interface.md says). */
const DEFAULT_PAGE_SIZE = 100;

const outOfRange = (field: string, max: number) => new ValidationError([{ field, message: `must be a whole number from 1 to ${max}` }]);

/** Parses a page size from a query string or GraphQL argument. */
export function pageSize(value: string | number | undefined | null, field = 'limit'): number | null {
  if (value === undefined || value === null) return null;
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) throw outOfRange(field, MAX_PAGE_SIZE);
  return n;
}

/**
 * A GraphQL list's `first`: its default, its largest page, and what the field does with a value out of 1..max
 * (refuses it, or takes the nearest). Declared once per field (`@Paged`), read by the field through pageOf() and by
 * the cost estimator before anything runs, so the cost is that of the page the field will use.
 */
export interface PageRange {
  default: number;
  max: number;
  outside: 'refuse' | 'clamp';
}

/** The paged lists' range: 1-500, 100 when absent; out of range is a 400. */
export const PAGE: PageRange = { default: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE, outside: 'refuse' };

/** The page a field uses for `first` (absent or null: the default); a refused value is a ValidationError on `first`. */
export function pageOf(range: PageRange, first: number | null | undefined): number {
  if (first === undefined || first === null) return range.default;
  if (range.outside === 'clamp') return Math.min(Math.max(1, first), range.max);
  if (!Number.isInteger(first) || first < 1 || first > range.max) throw outOfRange('first', range.max);
  return first;
}

export interface Page<T> {
  items: T[];
  /** Null when not asked for (`count: false`). */
  totalCount: number | null;
  hasNextPage: boolean;
  endCursor: string | null;
}

/** A list in SQL: `select <columns> from <from> where <where>`; its rows carry the alias's `created_at` and `id`. */
export interface KeysetQuery<R, T> {
  columns: string;
  from: string;
  /** The alias of the table whose (created_at, id) order the list follows. */
  alias: string;
  where: string;
  params: unknown[];
  /** A row as the caller shapes it, with its parsed creation time. */
  map: (row: R) => T & { createdAt: Time; id: string };
}

export interface KeysetOptions {
  /** Page size; every record when absent. */
  first?: number | null;
  /** Cursor of the last record of the previous page. */
  after?: string | null;
  /** Name of the cursor field in errors (`after` in GraphQL, `cursor` in REST). */
  afterField?: string;
  order: 'asc' | 'desc';
  /** Whether to count the whole list when paged (a statement of its own); unpaged, the count is the page's. */
  count: boolean;
}

/**
 * One page of rows in (created_at, id) order after a cursor, in one statement, plus one for the total when
 * paged and asked for; whatever the page size. Rows, not entities: nothing to track for a read. The count and
 * the page are sent at once, each on a pooled connection of its own (in a transaction, both on its connection, one
 * after the other): the page no longer waits for the count's round trip (the dashboard's first statements,
 * docs/benchmarks.md). As before, they are two statements, each seeing what was committed when it began.
 */
export async function keysetPage<R, T>(em: EntityManager, query: KeysetQuery<R, T>, opts: KeysetOptions): Promise<Page<T>> {
  const { alias } = query;
  let where = query.where;
  const params = [...query.params];
  // A cursor that does not read is refused before any statement is sent.
  if (opts.after) {
    const c = decodeCursor(opts.after, opts.afterField ?? 'cursor');
    where = `(${where}) and (${alias}.created_at, ${alias}.id) ${opts.order === 'desc' ? '<' : '>'} (?::timestamptz, ?::uuid)`;
    params.push(c.c, c.i);
  }
  const direction = opts.order === 'desc' ? 'desc' : 'asc';
  let sql = `select ${query.columns} from ${query.from} where ${where} order by ${alias}.created_at ${direction}, ${alias}.id ${direction}`;
  if (opts.first) {
    sql += ' limit ?';
    params.push(opts.first + 1);
  }
  const counted = opts.first && opts.count
    ? em.execute<Array<{ n: string }>>(`select count(*) as n from ${query.from} where ${query.where}`, query.params)
    : null;
  const page = em.execute<R[]>(sql, params);
  // Both settled before either's failure is thrown (the count's first, as when it ran first): no statement of this
  // request is left running behind its error.
  const [countRows, rows] = await Promise.allSettled([counted, page]);
  if (countRows.status === 'rejected') throw countRows.reason;
  if (rows.status === 'rejected') throw rows.reason;
  const totalCount = countRows.value ? Number(countRows.value[0].n) : null;
  const items = rows.value.map(query.map);
  const hasNextPage = !!opts.first && items.length > opts.first;
  if (hasNextPage) items.pop();
  const last = items[items.length - 1];
  return {
    items,
    totalCount: opts.first ? totalCount : items.length,
    hasNextPage,
    endCursor: last ? encodeCursor(last.createdAt, last.id) : null,
  };
}
