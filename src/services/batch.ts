/**
 * What a batched loader answers: the rows grouped under each id asked for, in row order; an id with no row
 * (unknown, or not the caller's) gets an empty list.
 */
export function groupUnder<R, V>(ids: readonly string[], rows: Iterable<R>, keyOf: (row: R) => string, view: (row: R) => V): Map<string, V[]> {
  const out = new Map<string, V[]>(ids.map((id) => [id, []]));
  for (const row of rows) out.get(keyOf(row))?.push(view(row));
  return out;
}
