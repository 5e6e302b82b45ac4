import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/**
 * Reading environment variables: one reader per kind of value, each throwing ConfigError with the variable's
 * name and what it must be, so that a bad setting stops the start with one clear line (src/server.ts).
 */

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function oneOf<T extends string>(env: Env, name: string, fallback: T, values: readonly T[]): T {
  const raw = str(env, name, fallback);
  if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

export function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must be a ${protocols.join(' or ')} URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * Adds the variables of a `.env` file (in the working directory by default) to `env`, when the file exists;
 * a variable the real environment already has, even empty, wins over the file. The format is Node's own
 * (`util.parseEnv`, as `node --env-file`): `NAME=value`, quotes, `#` comments, `export` prefixes.
 * Returns whether a file was read.
 */
export function readEnvFile(file = '.env', env: Env = process.env): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new ConfigError(`${file} could not be read: ${(err as Error).message}`);
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
  return true;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };

/** `500ms`, `5s`, `30m`, `2h`, `3d` in milliseconds; null when the text is not such a duration. */
function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  return m ? Math.round(Number(m[1]) * UNITS[m[2]]) : null;
}

/** A duration (`parseDuration`) from minMs to maxMs. */
export function duration(env: Env, name: string, fallback: string, minMs: number, maxMs: number): number {
  const raw = str(env, name, fallback);
  const ms = parseDuration(raw);
  if (ms === null || ms < minMs || ms > maxMs) {
    throw new ConfigError(`${name} must be a duration such as 500ms, 5s, 30m, 2h or 3d, from ${minMs} ms to ${maxMs} ms, got "${raw}"`);
  }
  return ms;
}

/** A comma-separated list of durations, each from minMs to maxMs. */
export function durations(env: Env, name: string, fallback: string, minMs: number, maxMs: number): number[] {
  const raw = str(env, name, fallback);
  return raw.split(',').map((part) => {
    const ms = parseDuration(part);
    if (ms === null || ms < minMs || ms > maxMs) {
      throw new ConfigError(`${name} must be a comma-separated list of durations such as 5s,5m,30m,2h (each from ${minMs} ms to ${maxMs} ms), got "${raw}"`);
    }
    return ms;
  });
}
