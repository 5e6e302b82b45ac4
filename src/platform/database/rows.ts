import type { EntityManager } from '@mikro-orm/postgresql';
import { parseTimestamp } from '../values/time';

/** Raw rows carry timestamps as PostgreSQL's text: the driver's parsers are off for the ORM. */
export type PgTimestamp = string | Date | null;

/**
 * A timestamp of a raw row, to the microsecond (a Timestamp, src/platform/values/time.ts); what PostgreSQL's text
 * form does not give as a plain timestamp (infinity) parsed as the ORM parses it.
 */
export function rowTime(em: EntityManager, value: string | Date): Date;
export function rowTime(em: EntityManager, value: PgTimestamp): Date | null;
export function rowTime(em: EntityManager, value: PgTimestamp): Date | null {
  if (value === null || value instanceof Date) return value;
  const exact = parseTimestamp(value);
  if (exact) return exact;
  const parsed = em.getPlatform().parseDate(value);
  return parsed instanceof Date ? parsed : new Date(value);
}
