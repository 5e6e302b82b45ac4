/** Password hashing with scrypt (node:crypto): `scrypt$N$r$p$saltBase64$hashBase64`. */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 64;
const SALT_LENGTH = 16;

/** Upper bounds on the parameters a stored hash may ask for, so a tampered row cannot exhaust memory. */
const MAX_N = 1 << 20;
const MAX_R = 32;
const MAX_P = 16;
const MAX_KEY_LENGTH = 256;

function derive(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; allow that plus headroom (the default cap is 32 MiB).
  const maxmem = 128 * (options.N ?? N) * (options.r ?? R) * 2;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, { ...options, maxmem }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Hashes a password with a fresh random salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const hash = await derive(password, salt, KEY_LENGTH, { N, r: R, p: P });
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

function positiveInt(s: string, max: number): number | null {
  if (!/^\d{1,9}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= max ? n : null;
}

/** Whether the password matches a hash made by hashPassword; false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const n = positiveInt(parts[1], MAX_N);
  const r = positiveInt(parts[2], MAX_R);
  const p = positiveInt(parts[3], MAX_P);
  if (n === null || r === null || p === null || n < 2 || (n & (n - 1)) !== 0) return false;
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  if (salt.length === 0 || expected.length === 0 || expected.length > MAX_KEY_LENGTH) return false;
  let actual: Buffer;
  try {
    actual = await derive(password, salt, expected.length, { N: n, r, p });
  } catch {
    return false;
  }
  return timingSafeEqual(actual, expected);
}
