import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';

/**
 * The settings' building blocks (src/platform/config.ts declares the configuration with them). A setting is a zod
 * schema that reads one variable of the whole environment and yields its value, or refuses it with one line naming
 * the variable and what it must be; `group` makes an object of settings, whose type is inferred from them;
 * `readSettings` throws the first refusal as a ConfigError, so that a bad setting stops the start with one clear line
 * (src/server.ts).
 */

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

/** The protocols of a web URL, and of a PostgreSQL one. */
export const HTTP = ['http:', 'https:'];
export const POSTGRES = ['postgres:', 'postgresql:'];
/** Seconds in a day. */
export const DAY = 86400;

/** A setting: a schema over the whole environment, whose output is the setting's value. */
export type Setting<T> = z.ZodType<T, z.ZodTypeDef, Env>;

/** Adds the refusal `message` (a whole line, naming the variable) to a parse; what a transform returns then. */
export function refuse(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: z.ZodIssueCode.custom, message });
  return z.NEVER;
}

/**
 * The variable `name`: `fallback` when it is unset or empty, else what `read` makes of its text. `read` refuses a text
 * by returning `refused('must be ..., got "..."')`: the line then begins with the variable's name.
 */
export function setting<T>(name: string, fallback: T, read: (raw: string, refused: (what: string) => never) => T): Setting<T> {
  return z.custom<Env>().transform((env, ctx) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    return read(raw, (what) => refuse(ctx, `${name} ${what}`));
  });
}

/** Settings as an object, each of them reading the whole environment; its type is inferred from theirs. */
export function group<S extends z.ZodRawShape>(shape: S) {
  return z.preprocess((env) => Object.fromEntries(Object.keys(shape).map((key) => [key, env])), z.object(shape));
}

/** The settings `schema` declares, read from `env`; the first refusal (in the declaration's order) is thrown. */
export function readSettings<T>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, env: Env): T {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  throw new ConfigError(issue.code === z.ZodIssueCode.custom ? issue.message : `${issue.path.join('.')}: ${issue.message}`);
}

/** Any text. */
export function strVar<F extends string | null>(name: string, fallback: F): Setting<string | F> {
  return setting<string | F>(name, fallback, (raw) => raw);
}

/** A whole number from min to max. */
export function intVar<F extends number | null>(name: string, fallback: F, min: number, max: number): Setting<number | F> {
  return setting<number | F>(name, fallback, (raw, refused) => (/^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max
    ? Number(raw) : refused(`must be a whole number from ${min} to ${max}, got "${raw}"`)));
}

/** true, 1 or yes; false, 0 or no (any case). */
export function boolVar(name: string, fallback: boolean): Setting<boolean> {
  return setting(name, fallback, (raw, refused) => {
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    return refused(`must be true or false, got "${raw}"`);
  });
}

/** One of `values`, as written. */
export function oneOfVar<const V extends readonly string[], F extends V[number] | null = V[number]>(name: string, fallback: F, values: V): Setting<V[number] | F> {
  return setting<V[number] | F>(name, fallback, (raw, refused) => (values.includes(raw) ? raw as V[number] : refused(`must be one of ${values.join(', ')}, got "${raw}"`)));
}

/** What is wrong with `raw` as a URL of one of `protocols` (`must be ...`), or null when nothing is. */
export function urlProblem(raw: string, protocols: readonly string[]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return `must be a URL, got "${raw}"`;
  }
  return protocols.includes(parsed.protocol) ? null : `must be a ${protocols.join(' or ')} URL, got "${raw}"`;
}

/** A URL of one of `protocols`, without trailing slashes. */
export function urlVar<F extends string | null>(name: string, fallback: F, protocols: readonly string[]): Setting<string | F> {
  return setting<string | F>(name, fallback, (raw, refused) => {
    const problem = urlProblem(raw, protocols);
    return problem ? refused(problem) : raw.replace(/\/+$/, '');
  });
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

/** Durations (`parseDuration`), comma-separated, each from minMs to maxMs; null when the text is not such a list. */
function durationList(text: string, minMs: number, maxMs: number): number[] | null {
  const all = text.split(',').map(parseDuration);
  return all.every((ms) => ms !== null && ms >= minMs && ms <= maxMs) ? all as number[] : null;
}

/** A duration (`parseDuration`) from minMs to maxMs; the fallback is written as one too. */
export function durationVar(name: string, fallback: string, minMs: number, maxMs: number): Setting<number> {
  return setting(name, parseDuration(fallback)!, (raw, refused) => {
    const ms = parseDuration(raw);
    return ms !== null && ms >= minMs && ms <= maxMs
      ? ms : refused(`must be a duration such as 500ms, 5s, 30m, 2h or 3d, from ${minMs} ms to ${maxMs} ms, got "${raw}"`);
  });
}

/** A comma-separated list of durations, each from minMs to maxMs. */
export function durationsVar(name: string, fallback: string, minMs: number, maxMs: number): Setting<number[]> {
  return setting(name, durationList(fallback, minMs, maxMs)!, (raw, refused) => durationList(raw, minMs, maxMs)
    ?? refused(`must be a comma-separated list of durations such as 5s,5m,30m,2h (each from ${minMs} ms to ${maxMs} ms), got "${raw}"`));
}
