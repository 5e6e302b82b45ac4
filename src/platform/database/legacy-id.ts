import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh 17-character legacy identifier (base62, about 101 bits of randomness). */
export function newLegacyId(): string {
  let id = '';
  for (let i = 0; i < 17; i++) id += ALPHABET[randomInt(ALPHABET.length)];
  return id;
}
