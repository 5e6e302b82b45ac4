/**
 * Typed errors. Services throw these; src/http/errors.middleware.ts maps them to REST bodies and
 * src/graphql/errors.ts to GraphQL `extensions.code`, each in one place.
 */

export interface FieldError {
  /** Path of the field as sent: `scopes.vat`, `managers.0.id`. */
  field: string;
  message: string;
}

export type ErrorCode =
  | 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE' | 'RATE_LIMITED' | 'SERVICE_UNAVAILABLE' | 'INTERNAL_SERVER_ERROR';

export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly code: ErrorCode;
  /** Extra fields merged into the REST error body. */
  body(): Record<string, unknown> {
    return {};
  }
}

export class ValidationError extends AppError {
  readonly status = 400;
  readonly code = 'BAD_USER_INPUT' as const;
  constructor(readonly errors: FieldError[], message = 'The request is not valid') {
    super(message);
  }
  override body() {
    return this.errors.length ? { errors: this.errors } : {};
  }
}

/** A 400 whose body is given whole (operations #33/#34 answer their own shapes). */
export class BadRequestError extends AppError {
  readonly status = 400;
  readonly code = 'BAD_USER_INPUT' as const;
}

export class UnauthenticatedError extends AppError {
  readonly status = 401;
  readonly code = 'UNAUTHENTICATED' as const;
}

export class ForbiddenError extends AppError {
  readonly status = 403;
  readonly code = 'FORBIDDEN' as const;
}

export class NotFoundError extends AppError {
  readonly status = 404;
  readonly code = 'NOT_FOUND' as const;
  constructor(message = 'Not found', private readonly extra: Record<string, unknown> = {}) {
    super(message);
  }
  override body() {
    return this.extra;
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
  readonly code = 'CONFLICT' as const;
}

export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  readonly code = 'PAYLOAD_TOO_LARGE' as const;
}

export class UnsupportedMediaTypeError extends AppError {
  readonly status = 415;
  readonly code = 'UNSUPPORTED_MEDIA_TYPE' as const;
}

/** A request Node's HTTP parser refused before any middleware ran (400, 408, 414, 431). */
export class MalformedRequestError extends AppError {
  readonly code = 'BAD_USER_INPUT' as const;
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** An answer the caller should retry later: carries the `Retry-After` seconds. */
export abstract class RetryLaterError extends AppError {
  constructor(message: string, readonly retryAfterSeconds: number, options?: ErrorOptions) {
    super(message, options);
  }
}

export class TooManyRequestsError extends RetryLaterError {
  readonly status = 429;
  readonly code = 'RATE_LIMITED' as const;
}

export class ServiceUnavailableError extends RetryLaterError {
  readonly status = 503;
  readonly code = 'SERVICE_UNAVAILABLE' as const;
  constructor(message: string, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(message, options?.retryAfterSeconds ?? 5, options);
  }
}

const DB_UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300']);

/** Whether an error means the database cannot be reached (answered 503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && DB_UNAVAILABLE_CODES.has(code)) return true;
    const msg = (e as { message?: unknown }).message;
    if (typeof msg === 'string' && /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(msg)) return true;
    e = (e as { cause?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return false;
}

/** Turns any thrown value into an AppError, or null when it is unexpected (a 500). */
export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError('The database is unavailable, try again shortly');
  return null;
}
