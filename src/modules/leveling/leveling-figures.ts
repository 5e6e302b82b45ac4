import { money, moneyNumeric } from '../../platform/money/money';
import { avg, compare, fromInt, mul, numeric, percent, round, sub, toNumber, type Numeric } from '../../platform/money/pg-numeric';

/**
 * The leveling's arithmetic on integers held in doubles: money in cents (numeric(14,2)), the median in
 * half-cents (the mean of two offers), each giving what PostgreSQL gives for the expression named on it.
 * Every function is exact where its operands allow it (integers below 2^53 and the bounds it checks), which
 * covers any amount below about 45 million: above, it computes the same with the exact decimals of
 * src/platform/money/pg-numeric.ts
 * (BigInt, ~50 times slower: 1,000 projects' leveling took 2.9 s with it alone).
 */

/** x / 2 rounded to an integer half away from zero (round(half-cents, 2) in cents). */
export const halve = (x: number) => (x % 2 === 0 ? x / 2 : (x + Math.sign(x)) / 2);

/**
 * `coalesce(round(a * 100 / nullif(b, 0), 2), 0)` of a and b given as integers in the same unit (cents or
 * half-cents). PostgreSQL rounds the quotient at its division scale (16 significant digits at least) then to 2
 * decimals; one exact rounding gives the same whenever no quotient other than a half lies within
 * 10^-16 of one: |a| < 100 |b| (a percent below 10,000: at least 16 decimals) and |b| ≤ 10^14 ensure it.
 * `exact` gives the same operands as PostgreSQL holds them, for the other cases.
 */
export function percentOf(a: number, b: number, exact: () => [Numeric, Numeric]): number {
  if (b === 0) return 0;
  const n = a * 10000;
  if (Number.isSafeInteger(n) && Math.abs(b) <= 1e14 && Math.abs(a) < 100 * Math.abs(b)) {
    const r = n % b;
    let q = (n - r) / b;
    if (2 * Math.abs(r) >= Math.abs(b)) q += (n < 0) !== (b < 0) ? -1 : 1;
    return q / 100 || 0;
  }
  const [x, y] = exact();
  return toNumber(percent(x, y));
}

/**
 * `round(avg(amount), 2)` of offers whose cents sum to `sum`. The quotient of an integer by a count n is an
 * integer plus k/n: never within 1/(2n) of a half unless it is one, and PostgreSQL divides to at least 6 decimals
 * of a cent for a mean below 10^11: one exact rounding is the same for n ≤ 10^6.
 */
export function meanOf(amounts: readonly number[]): number {
  const n = amounts.length;
  let sum = 0;
  for (const a of amounts) sum += a;
  if (Number.isSafeInteger(sum) && n <= 1e6 && Math.abs(sum) < n * 1e13) {
    const r = sum % n;
    let q = (sum - r) / n;
    if (2 * Math.abs(r) >= n) q += sum < 0 ? -1 : 1;
    return money(q);
  }
  return toNumber(round(avg(amounts.map(moneyNumeric)), 2));
}

/** The median of offers sorted ascending, in half-cents, and as PostgreSQL's avg() of the middle ones holds it. */
export function medianOf(amounts: readonly number[]): { halfCents: number; exact: () => Numeric } {
  const k = amounts.length;
  const middle = k % 2 ? [amounts[(k - 1) / 2]] : [amounts[k / 2 - 1], amounts[k / 2]];
  return {
    halfCents: middle.length === 1 ? 2 * middle[0] : middle[0] + middle[1],
    exact: () => avg(middle.map(moneyNumeric)),
  };
}

/** A threshold percent (a JavaScript number, 0-100) as the integer T and decimals k of T / 10^k. */
export function thresholdOf(value: number): { t: number; scale: number; exact: Numeric } {
  const exact = numeric(String(value));
  const t = Number(exact.v);
  return { t: Number.isSafeInteger(t) ? t : NaN, scale: exact.scale, exact };
}

/**
 * `median > 0 and (median - amount) * 100 > threshold * median`, with the median in half-cents and the
 * amount in cents: both sides times 2 * 10^k, exact while they stay below 2^52.
 */
export function belowMedian(amount: number, median: { halfCents: number; exact: () => Numeric }, threshold: ReturnType<typeof thresholdOf>): boolean {
  const m = median.halfCents;
  if (m <= 0) return false;
  const left = (m - 2 * amount) * 100 * 10 ** threshold.scale;
  const right = threshold.t * m;
  if (threshold.scale <= 15 && Math.abs(left) < 2 ** 52 && Math.abs(right) < 2 ** 52) return left > right;
  const med = median.exact();
  return compare(mul(sub(med, moneyNumeric(amount)), fromInt(100)), mul(threshold.exact, med)) > 0;
}
