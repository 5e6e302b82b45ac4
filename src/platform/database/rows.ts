import { dateOf, Instant, type Time } from '../values/time';

/** Raw rows carry timestamps as PostgreSQL's text: the driver's parsers are off for the ORM. */
export type PgTimestamp = string | Date | null;

/**
 * A timestamp of a raw row, kept as PostgreSQL's text until an answer writes it or code computes with it (an
 * Instant, src/platform/values/time.ts).
 */
export function rowTime(value: string | Date): Time;
export function rowTime(value: PgTimestamp): Time | null;
export function rowTime(value: PgTimestamp): Time | null {
  return value === null || value instanceof Date ? value : new Instant(value);
}

/** A timestamp of a raw row as a Date, for code that computes with it (a webhook endpoint's failing streak). */
export function rowDate(value: string | Date): Date;
export function rowDate(value: PgTimestamp): Date | null;
export function rowDate(value: PgTimestamp): Date | null {
  return value === null ? null : dateOf(rowTime(value));
}
