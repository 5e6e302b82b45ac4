import { DateTimeType } from '@mikro-orm/core';
import { formatTimestamp, parseTimestamp } from '../values/time';

/**
 * `timestamptz` to the microsecond for the ORM's entities: read as a Timestamp (a Date that keeps the microseconds
 * PostgreSQL has), written with them. The ORM's own date type reads a Date and drops them.
 */
class TimestampType extends DateTimeType {

  override convertToJSValue(value: unknown): Date {
    if (typeof value === 'string') return parseTimestamp(value) ?? new Date(value);
    return value as Date;
  }

  override convertToDatabaseValue(value: unknown): string {
    return value instanceof Date ? formatTimestamp(value) : (value as string);
  }

  /**
   * Whether two database values are the same instant: the row as loaded (PostgreSQL's text) and the entity's value
   * written out (ISO) differ as strings, and the unit of work would otherwise update every loaded row.
   */
  override compareValues(a: unknown, b: unknown): boolean {
    return exact(a) === exact(b);
  }
}

/** A database value as one comparable text, to the microsecond. */
function exact(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return formatTimestamp(value);
  const text = String(value);
  const parsed = parseTimestamp(text);
  return parsed ? formatTimestamp(parsed) : text;
}


/**
 * The options of a timestamptz property: its runtime type not 'Date', or the ORM would parse the column's text
 * into a Date (milliseconds) before the type above sees it.
 */
export const TIMESTAMPTZ = { type: TimestampType, runtimeType: 'Timestamp' } as const;
