/**
 * A timestamp as PostgreSQL keeps it, to the microsecond (decisions.md section 2): a Date (which holds milliseconds)
 * with the three digits below the millisecond that a Date would drop. The ORM's entities hold these
 * (src/platform/database/timestamp.type.ts); answers and cursors write them out whole.
 */
export class Timestamp extends Date {
  constructor(epochMs: number, readonly microsOfMilli: number) {
    super(epochMs);
  }
}

/**
 * A timestamp of a row read with SQL, kept as PostgreSQL's text of it (src/platform/database/rows.ts, rowTime). An
 * answer writes it out with a few string operations, and a Date is made only where code computes with one (`date`):
 * a dashboard reads thousands, and parsing each into a Date to format it back cost more than the rest of its row
 * (docs/benchmarks.md, issue 34).
 */
export class Instant {
  private parsed: Date | undefined;

  constructor(readonly text: string) {}

  /** The instant as a Date, to the microsecond where PostgreSQL's text is a plain timestamp (infinity is not). */
  get date(): Date {
    return (this.parsed ??= parseTimestamp(this.text) ?? new Date(this.text));
  }

  getTime(): number {
    return this.date.getTime();
  }

  /** As a Date's: comparisons, subtraction and `new Date(instant)` mean what they meant of the Date this used to be. */
  valueOf(): number {
    return this.date.getTime();
  }

  /** ISO 8601 UTC with microseconds and Z, as every answer writes a timestamp (formatTimestamp). */
  iso(): string {
    return utcText(this.text) ?? formatTimestamp(this.date);
  }

  /** What JSON.stringify wrote of the Date this used to be (milliseconds): a view serialized whole is unchanged. */
  toJSON(): string {
    return this.date.toJSON();
  }
}

/** A timestamp of a row or of an entity. */
export type Time = Date | Instant;

/**
 * `2026-11-01 08:00:00+00` or `2026-11-01 08:00:00.1234+00`, the text of a session whose zone is UTC (the pool's,
 * src/platform/database/limits.ts) for the years 1 to 9999, as ISO 8601 with microseconds; null for any other form.
 */
function utcText(t: string): string | null {
  const n = t.length;
  if (n < 22 || n > 29 || t.charCodeAt(10) !== 32 || t.charCodeAt(n - 3) !== 43 || t.charCodeAt(n - 2) !== 48 || t.charCodeAt(n - 1) !== 48) return null;
  if (n === 22) return `${t.slice(0, 10)}T${t.slice(11, 19)}.000000Z`;
  if (n === 23 || t.charCodeAt(19) !== 46) return null;
  return `${t.slice(0, 10)}T${t.slice(11, 19)}.${t.slice(20, n - 3).padEnd(6, '0')}Z`;
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

/** ISO 8601 UTC with microseconds and Z: `2026-11-21T09:30:00.123456Z` (decisions.md section 2). */
export function formatTimestamp(time: Time): string {
  if (time instanceof Instant) return time.iso();
  const iso = time.toISOString();
  // A Timestamp's own three digits below the millisecond; a Date's milliseconds followed by 000.
  return `${iso.slice(0, -1)}${time instanceof Timestamp ? String(time.microsOfMilli).padStart(3, '0') : '000'}Z`;
}

/** The Date of a timestamp, to compute with. */
export const dateOf = (time: Time): Date => (time instanceof Instant ? time.date : time);

/** `YYYY-MM-DD` of a UTC date. */
export function formatDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
