/**
 * What a batched loader answers: the rows grouped under each id asked for, in row order; an id with no row
 * (unknown, or not the caller's) gets an empty list.
 */
export function groupUnder<R, V>(ids: readonly string[], rows: Iterable<R>, keyOf: (row: R) => string, view: (row: R) => V): Map<string, V[]> {
  const out = new Map<string, V[]>();
  for (const id of ids) out.set(id, []);
  let lastKey: string | undefined;
  let last: V[] | undefined;
  for (const row of rows) {
    const key = keyOf(row);
    // Rows mostly come ordered by their key: the list of the row before, without a lookup.
    if (key !== lastKey) {
      lastKey = key;
      last = out.get(key);
    }
    last?.push(view(row));
  }
  return out;
}

/** Rows grouped by a key, in row order; only keys that have rows are present. */
export function groupBy<R>(rows: Iterable<R>, keyOf: (row: R) => string): Map<string, R[]>;
export function groupBy<R, V>(rows: Iterable<R>, keyOf: (row: R) => string, view: (row: R) => V): Map<string, V[]>;
export function groupBy<R, V>(rows: Iterable<R>, keyOf: (row: R) => string, view?: (row: R) => V): Map<string, Array<V | R>> {
  const out = new Map<string, Array<V | R>>();
  let lastKey: string | undefined;
  let last: Array<V | R> | undefined;
  for (const row of rows) {
    const key = keyOf(row);
    if (key !== lastKey) {
      lastKey = key;
      last = out.get(key);
      if (!last) out.set(key, last = []);
    }
    last!.push(view ? view(row) : row);
  }
  return out;
}
