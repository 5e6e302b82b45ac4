/**
 * A timestamp as PostgreSQL keeps it, to the microsecond (decisions.md section 2): a Date (which holds milliseconds)
 * with the three digits below the millisecond that a Date would drop. Rows read with SQL give these
 * (src/platform/database/rows.ts, rowTime); answers and cursors write them out whole.
 */
export class Timestamp extends Date {
  constructor(epochMs: number, readonly microsOfMilli: number) {
    super(epochMs);
  }
}

/**
 * A timestamp with up to six fraction digits and a zone, as PostgreSQL writes a timestamptz
 * (`2026-10-01 09:00:00.000001+00`, `+05:30`) or as ISO 8601 does (`2026-10-01T09:00:00.000001Z`).
 */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:(Z)|([+-]\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)$/;

/** Such a timestamp with its microseconds; null for what is not one (infinity, BC, a zone with seconds, ...). */
export function parseTimestamp(text: string): Timestamp | null {
  const m = TIMESTAMP.exec(text);
  if (!m || m[7]) return null;
  const fraction = (m[3] ?? '').padEnd(6, '0');
  const zone = m[4] ? 'Z' : `${m[5]}:${m[6] ?? '00'}`;
  const ms = Date.parse(`${m[1]}T${m[2]}.${fraction.slice(0, 3)}${zone}`);
  return Number.isNaN(ms) ? null : new Timestamp(ms, Number(fraction.slice(3)));
}

/** The six digits of the second's fraction: a Timestamp's own, a Date's milliseconds followed by 000. */
const microDigits = (date: Date) => (date instanceof Timestamp ? String(date.microsOfMilli).padStart(3, '0') : '000');

/** ISO 8601 UTC with microseconds and Z: `2026-11-21T09:30:00.123456Z` (decisions.md section 2). */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, `${microDigits(date)}Z`);
}

/** `YYYY-MM-DD` of a UTC date. */
export function formatDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
