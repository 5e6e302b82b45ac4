/** Text helpers shared by lookups that must ignore case and accents. */

/**
 * A lookup key for a name: ligatures spelled out (œ → oe, æ → ae), accents removed, lowercased, trimmed.
 * "Gros Œuvre" and "gros oeuvre" give the same key.
 */
export function normalizeKey(s: string): string {
  return s
    .replace(/œ/g, 'oe')
    .replace(/Œ/g, 'OE')
    .replace(/æ/g, 'ae')
    .replace(/Æ/g, 'AE')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .trim();
}
