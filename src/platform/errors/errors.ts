/**
 * Typed errors. Services throw these; src/platform/errors/http.ts maps them to REST bodies and
 * src/platform/errors/graphql.ts to GraphQL `extensions.code`, each in one place.
 */

export interface FieldError {
  /** Path of the field as sent: `scopes.vat`, `managers.0.id`. */
  field: string;
  message: string;
}

export type ErrorCode =
  | 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE' | 'RATE_LIMITED' | 'SERVICE_UNAVAILABLE' | 'INTERNAL_SERVER_ERROR' | 'IDEMPOTENCY_KEY_REUSED'
  | 'PERSISTED_QUERY_NOT_FOUND' | 'TRUSTED_DOCUMENT_REQUIRED' | GraphQLLimitCode;

/** The GraphQL limits a document can go over (docs/decisions.md, "Limits"): each refusal names its own. */
export const GRAPHQL_LIMIT_CODES = [
  'DOCUMENT_SIZE_LIMIT', 'TOKEN_LIMIT', 'DEPTH_LIMIT', 'ALIAS_LIMIT', 'DIRECTIVE_LIMIT', 'FIELD_REPEAT_LIMIT', 'COST_LIMIT',
] as const;
export type GraphQLLimitCode = typeof GRAPHQL_LIMIT_CODES[number];

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

/** A GraphQL request by document id that names no trusted document, or an arbitrary document where only trusted ones run. */
export class TrustedDocumentError extends AppError {
  readonly status = 400;
  constructor(readonly code: 'PERSISTED_QUERY_NOT_FOUND' | 'TRUSTED_DOCUMENT_REQUIRED' | 'BAD_USER_INPUT', message: string) {
    super(message);
  }
}

/** A GraphQL document over one of the limits on what a document may ask; nothing of it ran. */
export class GraphQLLimitError extends AppError {
  readonly status = 400;
  constructor(readonly code: GraphQLLimitCode, message: string) {
    super(message);
  }
}

/** A method the path does not serve; the answer lists the ones it does in `Allow`. */
export class MethodNotAllowedError extends AppError {
  readonly status = 405;
  readonly code = 'BAD_USER_INPUT' as const;
  constructor(method: string, path: string, readonly allow: string[]) {
    super(`${method} is not allowed on ${path}: use ${allow.join(' or ')}`);
  }
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

/** A retry under an `Idempotency-Key` while the request it repeats is still running (on any instance). */
export class IdempotencyKeyInUseError extends RetryLaterError {
  readonly status = 409;
  readonly code = 'CONFLICT' as const;
}

/** An `Idempotency-Key` sent again with another request (method, path or body): the key names one request. */
export class IdempotencyKeyReusedError extends AppError {
  readonly status = 422;
  readonly code = 'IDEMPOTENCY_KEY_REUSED' as const;
}

/**
 * An error made without capturing a stack: the refusals a flooding client causes thousands of times a second (a spent
 * budget, a caller over its share), whose stack nobody logs (a 4xx is never logged with one).
 */
export function withoutStack<T extends Error>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A quota as advertised in the `RateLimit-Policy` header: at most `points` every `windowSeconds`. */
export interface RateLimitPolicy {
  name: string;
  points: number;
  windowSeconds: number;
}

/** A 429; with the policy that refused, src/platform/http/rate-limit.middleware.ts also names it in the RateLimit headers. */
export class TooManyRequestsError extends RetryLaterError {
  readonly status = 429;
  readonly code = 'RATE_LIMITED' as const;
  constructor(message: string, retryAfterSeconds: number, readonly policy?: RateLimitPolicy) {
    super(message, retryAfterSeconds);
  }
}

export class ServiceUnavailableError extends RetryLaterError {
  readonly status = 503;
  readonly code = 'SERVICE_UNAVAILABLE' as const;
  constructor(message: string, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(message, options?.retryAfterSeconds ?? 5, options);
  }
}
