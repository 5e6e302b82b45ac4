import { camelToSnake } from '../validation/validation';
import type { Page } from '../database/pagination';
import { formatTimestamp, Instant } from '../values/time';

/** Service views are camelCase with Date (or row Instant) timestamps; REST bodies are snake_case with ISO strings. */
export function toRest(value: unknown): unknown {
  if (value instanceof Date || value instanceof Instant) return formatTimestamp(value);
  if (Array.isArray(value)) return value.map(toRest);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[camelToSnake(k)] = toRest(v);
  return out;
}

/**
 * A list of REST-shaped items under its key; when the caller asked for a page (`limit`), also `next_cursor`
 * and `total_count`.
 */
export function listBody(key: string, items: unknown, page: Page<unknown>, paged: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { [key]: items };
  if (paged) Object.assign(body, { next_cursor: page.hasNextPage ? page.endCursor : null, total_count: page.totalCount });
  return body;
}
