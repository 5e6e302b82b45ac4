/**
 * Validation rules with the messages of the interface ("must be at least 1"), composed from
 * class-validator. Every input class uses these, so REST, GraphQL and OpenAPI read one definition.
 */
import { Type } from 'class-transformer';
import {
  ArrayMinSize, IsArray, IsBoolean, IsDefined, IsEmail, IsIn, IsNotEmpty, IsNumber, IsObject, IsOptional, IsString, IsUUID,
  Max, MaxLength, Min, ValidateNested, registerDecorator,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { MAX_PAGE_SIZE } from '../database/pagination';

const compose = (...decorators: PropertyDecorator[]): PropertyDecorator => (target, key) => {
  for (const d of decorators) d(target, key);
};

/** Present and not null. */
export const Required = () => IsDefined({ message: 'is required' });
/** May be absent or null. */
export const Optional = () => IsOptional();
/** Nothing a reader would see: white space, control and format characters (zero-width space, BOM, direction marks). */
const BLANK = /^[\p{White_Space}\p{Cc}\p{Cf}]+$/u;
const isBlank = (value: unknown): boolean => typeof value === 'string' && BLANK.test(value);
/** Named for the OpenAPI converter, which documents it as a pattern. */
export const NOT_BLANK = 'isNotBlank';

/** A rule of ours, under `name` (what the OpenAPI converter and validation.ts know it by). */
const rule = (name: string, message: string, validate: (value: unknown) => boolean): PropertyDecorator => (target, propertyName) =>
  registerDecorator({ name, target: target.constructor, propertyName: propertyName as string, options: { message }, validator: { validate } });

/** Not only blank characters; the empty string is IsNotEmpty's to refuse, so that it gets one message. */
const NotBlank = () => rule(NOT_BLANK, 'must not be blank', (value) => !isBlank(value));

/**
 * Text a person reads (names, numbers, comments) or a code: a string, neither empty nor blank ("   " is no
 * name), of bounded length. Stored as sent, not trimmed.
 */
export const Text = (maxLength = 255) => compose(
  IsString({ message: 'must be a string' }),
  IsNotEmpty({ message: 'must not be empty' }),
  NotBlank(),
  MaxLength(maxLength, { message: `must be at most ${maxLength} characters long` }),
);
/**
 * `limit` of a paged list, as the query string gives it: text here, its value checked by pageSize()
 * (src/platform/database/pagination.ts, shared with GraphQL's `first`); described to clients as the integer it is.
 */
export const PageSize = () => compose(
  Text(8),
  JSONSchema(() => ({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, description: 'Page size; the answer is paged (`next_cursor`, `total_count`) when it is sent' })) as PropertyDecorator,
);
export const Uuid = () => IsUUID('all', { message: 'must be a UUID' });
export const Email = () => IsEmail({}, { message: 'must be an email address' });
export const OneOf = (values: readonly string[]) => IsIn([...values], { message: `must be one of: ${values.join(', ')}` });
/** Every item of a list one of `values`. */
export const EachOneOf = (values: readonly string[]) => IsIn([...values], { each: true, message: `must each be one of: ${values.join(', ')}` });
export const Num = () => IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'must be a number' });
export const AtLeast = (n: number) => Min(n, { message: `must be at least ${n}` });
export const AtMost = (n: number) => Max(n, { message: `must be at most ${n}` });
export const Bool = () => IsBoolean({ message: 'must be true or false' });
export const List = (min = 0) => compose(
  IsArray({ message: 'must be an array' }),
  ...(min > 0 ? [ArrayMinSize(min, { message: `must have at least ${min} item${min > 1 ? 's' : ''}` })] : []),
);
/**
 * No item of an array is itself an array. ValidateNested walks into such an item as if it were the list,
 * so `[[{...}]]` and `[[]]` would pass and reach the services; a primitive item it refuses itself
 * (`managers.0: must be an object`). validation.ts names each failing item by its index.
 */
export const NO_LIST_ITEMS = 'noListItems';
const NoListItems = () => rule(NO_LIST_ITEMS, 'must be an object', (value) => !Array.isArray(value) || !value.some((item) => Array.isArray(item)));

/** A nested object (or each item of an array) validated as `cls`. */
export const Nested = (cls: () => new () => object, opts: { each?: boolean } = {}) => compose(
  ...(opts.each ? [NoListItems()] : [IsObject({ message: 'must be an object' })]),
  ValidateNested({ each: opts.each }),
  Type(cls),
);

const DATE_INPUT = /^(\d{4})-(\d{2})-(\d{2})(T(\d{2}):(\d{2})(:(\d{2})(\.\d{1,6})?)?)?$/;

/** `YYYY-MM-DD` or a date-time without a zone, naming a real calendar day. */
function isDateInput(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATE_INPUT.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return false;
  return m[4] === undefined || (Number(m[5]) < 24 && Number(m[6]) < 60 && (m[8] === undefined || Number(m[8]) < 60));
}

/** The `YYYY-MM-DD` day of a date input. */
export const dayOf = (value: string) => value.slice(0, 10);

export const DateInput = () => rule('isDateInput', 'must be a valid date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SS without a zone)', isDateInput);
