const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a UUID (any version, either case). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/**
 * Ids worth sending to PostgreSQL: lowercase, deduplicated, and UUIDs only, since a malformed one could not
 * name a record and would make the `::uuid[]` cast fail the whole statement.
 */
export function uuidList(ids: readonly string[]): string[] {
  return [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
}
