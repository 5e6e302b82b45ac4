import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate, type ValidationError as ClassValidationError } from 'class-validator';
import { ValidationError, type FieldError } from '../errors/errors';
import { NO_LIST_ITEMS } from './rules';

/** Options every input is validated with: unknown fields are errors, nothing is coerced silently. */
const OPTIONS = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true, validationError: { target: false, value: true } };

/** Messages for constraints class-validator adds itself. */
const MESSAGES: Record<string, string> = {
  whitelistValidation: 'is not accepted by this operation',
  nestedValidation: 'must be an object',
  unknownValue: 'must be an object',
};

const TYPE_CHECKS = ['isString', 'isNumber', 'isBoolean', 'isArray', 'isObject'];

function flatten(errors: ClassValidationError[], prefix: string, out: FieldError[]): FieldError[] {
  for (const e of errors) {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const constraints = e.constraints ?? {};
    // A missing field fails every rule on it; saying it is required is enough. Likewise a value of the
    // wrong type: "must be a string" says it, "must be at most 255 characters long" would mislead.
    const typeCheck = TYPE_CHECKS.find((c) => constraints[c]);
    const failed = constraints.isDefined ? { isDefined: constraints.isDefined } : typeCheck ? { [typeCheck]: constraints[typeCheck] } : constraints;
    for (const [constraint, message] of Object.entries(failed)) {
      if (constraint === NO_LIST_ITEMS && Array.isArray(e.value)) {
        // Named by item, like the other item errors (`managers.0`).
        e.value.forEach((item: unknown, i) => { if (Array.isArray(item)) out.push({ field: `${field}.${i}`, message }); });
      } else {
        out.push({ field, message: MESSAGES[constraint] ?? message });
      }
    }
    if (e.children?.length) flatten(e.children, field, out);
  }
  return out;
}

/** PostgreSQL text cannot hold U+0000: such a value would fail in the database (a 500), so it is the caller's error. */
const NUL_MESSAGE = 'must not contain NUL characters';

/**
 * Every string holding a NUL, at any depth, by its path. Iterative, so no input's shape can overflow
 * the stack; keys are walked as given (bodies are camelized, hence bounded in depth, before this).
 */
function nulFields(value: unknown): FieldError[] {
  const out: FieldError[] = [];
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) out.push({ field: path, message: NUL_MESSAGE });
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], path ? `${path}.${entries[i][0]}` : entries[i][0]]);
    }
  }
  return out;
}

/** The rule failures of an instance plus the NUL check of every string it holds, each once. */
async function failures(instance: object, plain: unknown): Promise<FieldError[]> {
  const errors = flatten(await validate(instance, OPTIONS), '', []);
  for (const e of nulFields(plain)) {
    if (!errors.some((x) => x.field === e.field && x.message === e.message)) errors.push(e);
  }
  return errors;
}

/**
 * Builds an instance of an input class from plain data and validates it; throws ValidationError listing
 * every failing field by its path (`scopes.vat`, `managers.0.id`).
 */
export async function validateInput<T extends object>(cls: ClassConstructor<T>, plain: unknown): Promise<T> {
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) {
    throw new ValidationError([], 'The request body must be a JSON object');
  }
  const instance = plainToInstance(cls, plain);
  const errors = await failures(instance, plain);
  if (errors.length) throw new ValidationError(errors);
  return instance;
}

/** Validates an instance made by someone else (type-graphql's arguments). */
export async function validateInstance(instance: object): Promise<void> {
  const errors = await failures(instance, instance);
  if (errors.length) throw new ValidationError(errors);
}

const UNKNOWN = '__not_snake_case__';

const snakeToCamel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const camelToSnake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Deepest nesting of arrays and objects a request may send; the interface's bodies need a few levels. */
export const MAX_DEPTH = 32;

/** Whether a parsed JSON value nests arrays and objects deeper than `max` (one pass, no recursion: any depth is safe). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length) {
    const [v, depth] = pending.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Names every object inherits (`constructor`, `toString`, `__proto__`): as keys of a plain object they
 * would read or replace what the object inherits instead of being fields, so they are unknown fields.
 */
const inherited = (key: string) => key in Object.prototype;

/**
 * REST bodies are snake_case, input classes camelCase (GraphQL's names): converts keys deeply. A key
 * that is not snake_case, or that names an inherited property, is kept under a marker, so it fails as
 * an unknown field rather than matching. Nesting beyond MAX_DEPTH is refused before anything recurses
 * over it.
 */
function camelizeKeys(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) throw new ValidationError([], 'The request body is nested too deeply');
  if (Array.isArray(value)) return value.map((v) => camelizeKeys(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const camel = snakeToCamel(key);
    const known = camelToSnake(camel) === key && !inherited(key) && !inherited(camel);
    out[known ? camel : `${UNKNOWN}${key}`] = camelizeKeys(v, depth + 1);
  }
  return out;
}

/** Turns a field path of an input class back into the REST body's path. */
function snakePath(path: string): string {
  return path.split('.').map((p) => (p.startsWith(UNKNOWN) ? p.slice(UNKNOWN.length) : camelToSnake(p))).join('.');
}

/** Rethrows a validation error with its fields named as a REST caller sent them; other errors as they are. */
export function withRestFieldNames(err: unknown): never {
  if (err instanceof ValidationError) {
    throw new ValidationError(err.errors.map((e) => ({ field: snakePath(e.field), message: e.message })), err.message);
  }
  throw err;
}

/**
 * Validates a REST query string like a body: against the operation's query class, or, for an operation that
 * declares none, as an empty one, so that any parameter is an unknown field (as sent: `limit[0]`).
 */
export async function validateRestQuery<T extends object>(cls: ClassConstructor<T> | undefined, query: Record<string, unknown>): Promise<T | Record<string, never>> {
  if (cls) return validateRestInput(cls, { ...query });
  const unknown = Object.keys(query);
  if (unknown.length) throw new ValidationError(unknown.map((field) => ({ field, message: MESSAGES.whitelistValidation })));
  return {};
}

/** Validates a snake_case REST body against a camelCase input class; errors name the fields as sent. */
export async function validateRestInput<T extends object>(cls: ClassConstructor<T>, body: unknown): Promise<T> {
  try {
    return await validateInput(cls, camelizeKeys(body));
  } catch (err) {
    return withRestFieldNames(err);
  }
}
