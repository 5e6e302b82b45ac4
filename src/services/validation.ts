import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate, type ValidationError as ClassValidationError } from 'class-validator';
import { ValidationError, type FieldError } from '../errors';

/** Options every input is validated with: unknown fields are errors, nothing is coerced silently. */
const OPTIONS = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true, validationError: { target: false, value: false } };

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
      out.push({ field, message: MESSAGES[constraint] ?? message });
    }
    if (e.children?.length) flatten(e.children, field, out);
  }
  return out;
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
  const errors = await validate(instance, OPTIONS);
  if (errors.length) throw new ValidationError(flatten(errors, '', []));
  return instance;
}

/** Validates an instance made by someone else (type-graphql's arguments). */
export async function validateInstance(instance: object): Promise<void> {
  const errors = await validate(instance, OPTIONS);
  if (errors.length) throw new ValidationError(flatten(errors, '', []));
}

const UNKNOWN = '__not_snake_case__';

export const snakeToCamel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const camelToSnake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * REST bodies are snake_case, input classes camelCase (GraphQL's names): converts keys deeply. A key
 * that is not snake_case is kept under a marker, so it fails as an unknown field rather than matching.
 */
export function camelizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelizeKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const camel = snakeToCamel(key);
    out[camelToSnake(camel) === key ? camel : `${UNKNOWN}${key}`] = camelizeKeys(v);
  }
  return out;
}

/** Turns a field path of an input class back into the REST body's path. */
export function snakePath(path: string): string {
  return path.split('.').map((p) => (p.startsWith(UNKNOWN) ? p.slice(UNKNOWN.length) : camelToSnake(p))).join('.');
}

/** Validates a snake_case REST body against a camelCase input class; errors name the fields as sent. */
export async function validateRestInput<T extends object>(cls: ClassConstructor<T>, body: unknown): Promise<T> {
  try {
    return await validateInput(cls, camelizeKeys(body));
  } catch (err) {
    if (err instanceof ValidationError) {
      throw new ValidationError(err.errors.map((e) => ({ field: snakePath(e.field), message: e.message })), err.message);
    }
    throw err;
  }
}
