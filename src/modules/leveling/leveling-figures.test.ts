import fc from 'fast-check';
import { belowMedian, meanOf, medianOf, percentOf, thresholdOf, halve } from './leveling-figures';
import { money, moneyNumeric } from '../../platform/money/money';
import { sub } from '../../platform/money/pg-numeric';
import { startTestApp, type TestApp } from '../../../test/support/app';

/*
 * The leveling computes its figures in node (src/modules/leveling/leveling-figures.ts, ./pg-numeric for what doubles
 * cannot hold exactly) and must answer, to the last digit, what the SQL expressions of docs/leveling.md answer
 * in PostgreSQL: random offers, budgets and thresholds, ordinary and extreme (numeric(14,2)'s largest amounts,
 * quotients near a half, percents above 10,000), compared with PostgreSQL's own answers in one statement per run.
 */

const RUNS = process.env.FUZZ_RUNS ? Math.max(1, Math.floor(Number(process.env.FUZZ_RUNS) / 100)) : 60;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const MAX = 99_999_999_999_999; // numeric(14,2)'s largest, in cents
const cents = fc.oneof(
  fc.integer({ min: -MAX, max: MAX }),
  fc.integer({ min: 0, max: 20_000_000 }),
  fc.constantFrom(0, 1, -1, 3, 7, 300, 999_999, MAX, -MAX, 33_333_333_333_333, 66_666_666_666_667),
);
const threshold = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 100, noNaN: true }), fc.constantFrom(0.000001, 33.333333, 1e-7));

/**
 * Offers whose deviation from the median, as a percent, lies within 10^-16 of a half at the 2nd decimal
 * (medians of 99,999,999,999,996.5 and 99,999,999,999,995.5 cents): PostgreSQL rounds it at its division's scale first, then to 2
 * decimals, so one exact rounding would differ.
 */
const NEAR_HALF = [[85_714_999_999_997, 99_999_999_999_996, 99_999_999_999_997, 99_999_999_999_997], [44_444_999_999_998, 99_999_999_999_995, 99_999_999_999_996, 99_999_999_999_996]];

describe('leveling figures', () => {
  it('equal PostgreSQL\'s numeric expressions: percents, median, mean, abnormally low', async () => {
    await fc.assert(fc.asyncProperty(fc.oneof(fc.array(cents, { minLength: 1, maxLength: 6 }), fc.constantFrom(...NEAR_HALF)), cents, threshold, async (offers, budget, percent) => {
      const amounts = [...offers].sort((a, b) => a - b);
      const median = medianOf(amounts);
      const th = thresholdOf(percent);
      const [pg] = await t.orm.em.fork().getConnection().execute<Array<Record<string, string | boolean[] | string[]>>>(`
        with o as (select (x::numeric / 100)::numeric(14,2) as amount, n from unnest(array[?]::bigint[]) with ordinality o(x, n)),
        b as (select (?::numeric / 100)::numeric(14,2) as budget),
        m as (select avg(amount) as median from o where n in ((? + 1) / 2, (? + 2) / 2))
        select round(m.median, 2)::text as median, (select round(avg(amount), 2) from o)::text as mean,
          array(select coalesce(round((o.amount - b.budget) * 100 / nullif(b.budget, 0), 2), 0)::text from o order by n) as budget_pct,
          array(select coalesce(round((o.amount - m.median) * 100 / nullif(m.median, 0), 2), 0)::text from o order by n) as median_pct,
          array(select round(o.amount - m.median, 2)::text from o order by n) as median_dev,
          array(select coalesce(m.median > 0 and (m.median - o.amount) * 100 > ?::numeric * m.median, false) from o order by n) as low
        from m, b`, [amounts.map(String), String(budget), amounts.length, amounts.length, String(percent)]);
      expect(money(halve(median.halfCents))).toBe(Number(pg.median));
      expect(meanOf(amounts)).toBe(Number(pg.mean));
      expect(amounts.map((a) => percentOf(a - budget, budget, () => [sub(moneyNumeric(a), moneyNumeric(budget)), moneyNumeric(budget)])))
        .toEqual((pg.budget_pct as string[]).map(Number));
      expect(amounts.map((a) => percentOf(2 * a - median.halfCents, median.halfCents, () => {
        const m = median.exact();
        return [sub(moneyNumeric(a), m), m];
      }))).toEqual((pg.median_pct as string[]).map(Number));
      expect(amounts.map((a) => money(halve(2 * a - median.halfCents)))).toEqual((pg.median_dev as string[]).map(Number));
      expect(amounts.map((a) => belowMedian(a, median, th))).toEqual(pg.low);
    }), { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20261123) });
  }, 120_000);
});
