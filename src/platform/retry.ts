/** The wait before the next attempt after `failures` in a row: `firstMs`, doubled at each failure, at most `maxMs`. */
export function backoffMs(failures: number, firstMs: number, maxMs: number): number {
  return Math.min(firstMs * 2 ** Math.max(0, failures - 1), maxMs);
}
