import { ValidationError } from '../errors';

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

export function decodeCursor(cursor: string, field = 'cursor'): Cursor {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
    if (typeof v.c === 'string' && typeof v.i === 'string' && !Number.isNaN(Date.parse(v.c))) return v;
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
