/**
 * PostgreSQL `numeric` arithmetic in TypeScript, to the digit: the leveling computes its figures in node
 * from the offers' exact values (docs/leveling.md) and must answer what the same expressions answer in
 * PostgreSQL. A value is an integer and a display scale (`dscale`, PostgreSQL's name), as PostgreSQL keeps
 * it: the scale of a result follows PostgreSQL's rules, because the scale of a quotient depends on them.
 *
 * - `+`, `-`: exact, scale the larger of the two; `*`: exact, scale the sum of the two.
 * - `/`: PostgreSQL's `select_div_scale` (at least 16 significant digits, never fewer decimals than either
 *   operand), correctly rounded half away from zero at that scale (div_var with rounding). A percent
 *   `round(a * 100 / b, 2)` is so rounded twice, as PostgreSQL rounds it: once at the division's scale, then
 *   to 2 decimals; rounding the exact quotient once could differ on a quotient within 10^-16 of a half.
 * - `round(x, n)`: half away from zero; `avg`: the sum divided by the count, as numeric_avg does.
 */
export interface Numeric {
  /** The value times 10^scale. */
  readonly v: bigint;
  readonly scale: number;
}

const TEN = 10n;
const pow10 = (n: number) => TEN ** BigInt(n);

/** PostgreSQL's text of a numeric (`-123.45`, `0`, `1e-7` from a JavaScript number's writing). */
export function numeric(text: string): Numeric {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m || (m[2] === '' && !m[3])) throw new RangeError(`not a numeric: ${text}`);
  const [, sign, int, frac = '', exp = '0'] = m;
  let v = BigInt(`${int || '0'}${frac}`);
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    v *= pow10(-scale);
    scale = 0;
  }
  return { v: sign === '-' ? -v : v, scale };
}

export const fromInt = (n: number | bigint): Numeric => ({ v: BigInt(n), scale: 0 });

const rescale = (a: Numeric, scale: number): bigint => a.v * pow10(scale - a.scale);

function add(a: Numeric, b: Numeric): Numeric {
  const scale = Math.max(a.scale, b.scale);
  return { v: rescale(a, scale) + rescale(b, scale), scale };
}

export function sub(a: Numeric, b: Numeric): Numeric {
  const scale = Math.max(a.scale, b.scale);
  return { v: rescale(a, scale) - rescale(b, scale), scale };
}

export const mul = (a: Numeric, b: Numeric): Numeric => ({ v: a.v * b.v, scale: a.scale + b.scale });

export function compare(a: Numeric, b: Numeric): number {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** n / d rounded to an integer, half away from zero (d ≠ 0). */
function divRound(n: bigint, d: bigint): bigint {
  const negative = (n < 0n) !== (d < 0n);
  const an = n < 0n ? -n : n;
  const ad = d < 0n ? -d : d;
  const q = (2n * an + ad) / (2n * ad);
  return negative ? -q : q;
}

/** round(a, scale) for scale ≥ 0: half away from zero; a scale above a's pads it, as PostgreSQL does. */
export function round(a: Numeric, scale: number): Numeric {
  if (scale >= a.scale) return { v: rescale(a, scale), scale };
  return { v: divRound(a.v, pow10(a.scale - scale)), scale };
}

/** The weight (power of 10,000 of the first non-zero base-10,000 digit) and that digit, as NumericVar holds them. */
function weightAndFirstDigit(a: Numeric): [number, bigint] {
  if (a.v === 0n) return [0, 0n];
  const pad = (4 - (a.scale % 4)) % 4;
  let top = (a.v < 0n ? -a.v : a.v) * pow10(pad);
  let digits = 0;
  while (top >= 10000n) {
    top /= 10000n;
    digits++;
  }
  return [digits - (a.scale + pad) / 4, top];
}

/** PostgreSQL's select_div_scale (numeric.c). */
function divScale(a: Numeric, b: Numeric): number {
  const [w1, f1] = weightAndFirstDigit(a);
  const [w2, f2] = weightAndFirstDigit(b);
  let qweight = w1 - w2;
  if (f1 <= f2) qweight--;
  return Math.min(Math.max(16 - qweight * 4, a.scale, b.scale, 0), 1000);
}

/** a / b as PostgreSQL divides numerics (b ≠ 0). */
function div(a: Numeric, b: Numeric): Numeric {
  const scale = divScale(a, b);
  // a / b * 10^scale = a.v * 10^(b.scale + scale) / (b.v * 10^a.scale)
  return { v: divRound(a.v * pow10(b.scale + scale), b.v * pow10(a.scale)), scale };
}

export const avg = (values: readonly Numeric[]): Numeric => div(values.reduce(add, fromInt(0)), fromInt(values.length));

/** `coalesce(round(a * 100 / nullif(b, 0), 2), 0)`: a as a percent of b, 0 when b is 0 (decisions.md section 5). */
export function percent(a: Numeric, b: Numeric): Numeric {
  return b.v === 0n ? fromInt(0) : round(div(mul(a, fromInt(100)), b), 2);
}

function toText(a: Numeric): string {
  const negative = a.v < 0n;
  const digits = (negative ? -a.v : a.v).toString().padStart(a.scale + 1, '0');
  const int = digits.slice(0, digits.length - a.scale);
  const frac = digits.slice(digits.length - a.scale);
  return `${negative ? '-' : ''}${int}${a.scale ? `.${frac}` : ''}`;
}

/**
 * The nearest double, as `Number(text)` gives it for PostgreSQL's text: one correctly rounded division of
 * two exact doubles when both are exact (integers below 2^53, powers of 10 up to 10^22), else the text.
 */
export function toNumber(a: Numeric): number {
  const abs = a.v < 0n ? -a.v : a.v;
  if (abs <= BigInt(Number.MAX_SAFE_INTEGER) && a.scale <= 22) return a.scale === 0 ? Number(a.v) : Number(a.v) / 10 ** a.scale;
  return Number(toText(a));
}
