/**
 * Typed errors. Services throw these; src/platform/errors/http.ts maps them to REST bodies and
 * src/platform/errors/graphql.ts to GraphQL `extensions.code`, each in one place.
 */

import { commitOutcomeUnknownHere, connectionCutHere, lastFailureHere } from '../database/limits';

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

/**
 * SQLSTATEs and socket errors meaning the database cannot serve right now, by what the caller is told.
 * `busy`: it answers but a bound ran out (statement_timeout or a cancel: 57014; lock_timeout: 55P03; a
 * transaction killed by idle_in_transaction_session_timeout: 25P03; too many connections: 53300, 53400).
 * `down`: it cannot be reached or is stopping (connection exceptions 08xxx, shutdown 57P01-57P03, sockets).
 * PgBouncer reports its own failures as 08P01 too (PGBOUNCER_FAULTS); PostgreSQL's own 08P01 is a protocol error
 * of the client (a bind of the wrong number of parameters), a bug: 500.
 */
const BUSY_CODES = new Set(['57014', '55P03', '25P03', '53300', '53400']);
const READ_ONLY_CODES = new Set(['25006']);
const DOWN_CODES = new Set([
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
]);
/** The pool's acquire timeout (knex's KnexTimeoutError, also when MikroORM wraps it). */
const BUSY_MESSAGES = /^Knex: Timeout acquiring a connection/;
/** node-postgres's own wording for a socket closed, a connect timeout, or a server that stopped answering. */
const DOWN_MESSAGES = /Connection terminated|timeout expired|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable/i;
/**
 * knex's refusal of a statement sent on a transaction it already ended. A fault only when the request gave the
 * transaction's connection up on a read timeout (a BEGIN the server never answered: the write then finds its
 * transaction gone), or when an earlier statement of the request failed for a fault (the connection lost, even
 * under a BEGIN: src/platform/database/limits.ts); otherwise a transaction used after its end, a bug: 500.
 */
const TRANSACTION_ENDED = /^Transaction query already complete/;

/**
 * PgBouncer's own refusals (SQLSTATE 08P01), by what they mean for the caller: no server connection free within
 * query_wait_timeout or too many clients (busy); a server it cannot reach, log into, or that crashed, its own bounds
 * ending a client, a shutdown (down). Its configuration errors (no such database, unsupported startup parameter)
 * are not here: waiting would not fix them.
 */
const PGBOUNCER_FAULTS: Array<[RegExp, DatabaseFault]> = [
  [/query_wait_timeout|no more connections allowed|too many servers/, 'busy'],
  [/server login has been failing|server conn crashed|cannot connect to server|client_login_timeout|query timeout|idle transaction timeout|server shutting down|pooler is shutting down|database .* (paused|disabled)/i, 'down'],
];

export type DatabaseFault = 'busy' | 'down' | 'read-only';

/** Whether the request's last failed statement, before `ended`, was a database fault. */
function endedByFault(ended: unknown): boolean {
  const failure = lastFailureHere();
  return failure !== null && failure !== ended && databaseFault(failure) !== null;
}

/** Whether an error means the database cannot serve now (answered 503, not 500), and why; null otherwise. */
export function databaseFault(err: unknown): DatabaseFault | null {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && BUSY_CODES.has(code)) return 'busy';
    if (typeof code === 'string' && READ_ONLY_CODES.has(code)) return 'read-only';
    if (typeof code === 'string' && DOWN_CODES.has(code)) return 'down';
    const msg = (e as { message?: unknown }).message;
    if (code === '08P01' && typeof msg === 'string') {
      const fault = PGBOUNCER_FAULTS.find(([pattern]) => pattern.test(msg));
      if (fault) return fault[1];
    }
    if (typeof msg === 'string' && BUSY_MESSAGES.test(msg)) return 'busy';
    if (typeof msg === 'string' && DOWN_MESSAGES.test(msg)) return 'down';
    if (typeof msg === 'string' && TRANSACTION_ENDED.test(msg) && (connectionCutHere() || endedByFault(e))) return 'down';
    e = (e as { cause?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return null;
}

/** Whether an error means the database cannot serve now (a 503). */
export function isDatabaseUnavailable(err: unknown): boolean {
  return databaseFault(err) !== null;
}

const FAULT_MESSAGES: Record<DatabaseFault, string> = {
  busy: 'The database is busy, try again shortly',
  down: 'The database is unavailable, try again shortly',
  'read-only': 'The database takes no writes right now (its primary is changing), try again shortly',
};

/**
 * When the connection was lost with a COMMIT under way, the write may have been saved: the caller is told so, and how
 * to find out (an Idempotency-Key replays what was saved; docs/faults.md, "Failover").
 */
const COMMIT_UNKNOWN = 'The database connection was lost while the write was committing: it may have been saved. Send it again with the same Idempotency-Key to get its answer without writing it twice';

/** Turns any thrown value into an AppError, or null when it is unexpected (a 500). */
export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const fault = databaseFault(err);
  if (fault) return new ServiceUnavailableError(fault === 'down' && commitOutcomeUnknownHere() ? COMMIT_UNKNOWN : FAULT_MESSAGES[fault], { cause: err });
  return null;
}
