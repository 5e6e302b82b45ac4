import fc from 'fast-check';
import { amountOf, round2 } from '../src/platform/money/money';

/** Money read from PostgreSQL's text of a numeric (src/platform/money/money.ts; decisions.md section 2). */
describe('amountOf: an amount as PostgreSQL answers it, as the JSON number it goes out as', () => {
  const text = (cents: number, decimals: 0 | 1 | 2) => {
    const digits = String(Math.abs(cents)).padStart(3, '0');
    const sign = cents < 0 ? '-' : '';
    const whole = digits.slice(0, -2);
    return decimals === 2 ? `${sign}${whole}.${digits.slice(-2)}` : decimals === 1 ? `${sign}${whole}.${digits.slice(-2, -1)}` : `${sign}${whole}`;
  };

  it('reads a numeric(14,2) as the number rounding to 2 decimals gives (the fast path agrees with round2)', () => {
    fc.assert(fc.property(fc.integer({ min: -99_999_999_999_999, max: 99_999_999_999_999 }), fc.constantFrom(0 as const, 1 as const, 2 as const), (cents, decimals) => {
      const t = text(cents, decimals);
      const rounded = round2(Number(t));
      expect(amountOf(t)).toBe(rounded === 0 ? 0 : rounded);
    }), { numRuns: 20_000 });
  });

  it('rounds a text with more than 2 decimals to 2', () => {
    expect(amountOf('1.005')).toBe(round2(1.005));
    expect(amountOf('12.3456')).toBe(12.35);
  });

  it('reads zero, negative zero and none as 0 (never -0)', () => {
    expect(Object.is(amountOf('-0.00'), 0)).toBe(true);
    expect(amountOf(null)).toBe(0);
    expect(amountOf(undefined)).toBe(0);
    expect(amountOf('0')).toBe(0);
  });

  it('takes numbers as they are, rounded to 2 decimals', () => {
    expect(amountOf(10.126)).toBe(10.13);
  });
});
