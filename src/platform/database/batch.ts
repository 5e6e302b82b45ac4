/**
 * What a batched loader answers: the rows grouped under each id asked for, in row order; an id with no row
 * (unknown, or not the caller's) gets an empty list.
 */
export function groupUnder<R, V>(ids: readonly string[], rows: Iterable<R>, keyOf: (row: R) => string, view: (row: R) => V): Map<string, V[]> {
  const out = new Map<string, V[]>(ids.map((id) => [id, []]));
  for (const row of rows) out.get(keyOf(row))?.push(view(row));
  return out;
}

/** Rows grouped by a key, in row order; only keys that have rows are present. */
export function groupBy<R, V = R>(rows: Iterable<R>, keyOf: (row: R) => string, view: (row: R) => V = (row) => row as unknown as V): Map<string, V[]> {
  const out = new Map<string, V[]>();
  for (const row of rows) {
    const key = keyOf(row);
    const list = out.get(key);
    if (list) list.push(view(row));
    else out.set(key, [view(row)]);
  }
  return out;
}
