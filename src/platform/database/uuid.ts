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

/**
 * Ids as a PostgreSQL `uuid[]` literal written into the statement: a batch of thousands of ids is one string to
 * build, not one quoted parameter each (MikroORM interpolates parameters on the client, quoting them one by
 * one). Safe to write in: every id is checked here to be a UUID, hex digits and dashes only.
 */
export function uuidArraySql(ids: readonly string[]): string {
  for (const id of ids) if (!isUuid(id)) throw new Error(`not a UUID: ${JSON.stringify(id).slice(0, 60)}`);
  return `'{${ids.join(',')}}'::uuid[]`;
}
