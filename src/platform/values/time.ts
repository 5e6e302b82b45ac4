/** ISO 8601 UTC with microseconds and Z: `2026-11-21T09:30:00.123000Z` (decisions.md section 2). */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z');
}

/** `YYYY-MM-DD` of a UTC date. */
export function formatDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
