import type { EntityManager } from '@mikro-orm/postgresql';

/** Raw rows carry timestamps as PostgreSQL's text: the driver's parsers are off for the ORM. */
export type PgTimestamp = string | Date | null;

/** A timestamp of a raw row, parsed as the ORM parses it. */
export function rowTime(em: EntityManager, value: string | Date): Date;
export function rowTime(em: EntityManager, value: PgTimestamp): Date | null;
export function rowTime(em: EntityManager, value: PgTimestamp): Date | null {
  if (value === null || value instanceof Date) return value;
  const parsed = em.getPlatform().parseDate(value);
  return parsed instanceof Date ? parsed : new Date(value);
}
