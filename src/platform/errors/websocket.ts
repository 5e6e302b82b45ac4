import { CloseCode } from 'graphql-ws';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { ForbiddenError, RetryLaterError, UnauthenticatedError } from './errors';
import { toAppError } from './database-faults';

/**
 * Close codes of a WebSocket connection (graphql-ws's 4401 Unauthorized and 4403 Forbidden, and the registry's
 * 1001 and 1013), besides which we use 4429 for our limits and 4503 for a client that does not read what is sent to
 * it: what a client does next depends on it (4401: do not retry with that token; 4403: reconnect with a fresh one;
 * 4429, 4503 and 1013: retry later).
 */
export const CLOSE = {
  goingAway: 1001,
  tryAgainLater: 1013,
  unauthorized: CloseCode.Unauthorized,
  forbidden: CloseCode.Forbidden,
  tooMany: 4429,
  slowReader: 4503,
  internal: CloseCode.InternalServerError,
} as const;

/** How a refusal closes the socket: its code, its reason, and the `reason` label of graphql_subscription_refusals_total. */
export interface Closing {
  code: number;
  message: string;
  why: 'rate_limited' | 'unauthenticated' | 'forbidden' | 'unavailable' | 'error';
  /** A retry-later error (logged at WARN with its cause), a fault (logged at ERROR), or neither. */
  log: 'warn' | 'error' | null;
}

/** The one mapping of errors to close codes (as src/platform/errors/http.ts is HTTP's and graphql.ts GraphQL's). */
export function closingOf(err: unknown): Closing {
  if (err instanceof RateLimiterRes) {
    return { code: CLOSE.tooMany, message: `Too many requests: retry in ${Math.max(1, Math.ceil(err.msBeforeNext / 1000))} seconds`, why: 'rate_limited', log: null };
  }
  const known = toAppError(err);
  if (known instanceof UnauthenticatedError) return { code: CLOSE.unauthorized, message: known.message, why: 'unauthenticated', log: null };
  if (known instanceof ForbiddenError) return { code: CLOSE.forbidden, message: known.message, why: 'forbidden', log: null };
  if (known instanceof RetryLaterError) return { code: CLOSE.tryAgainLater, message: known.message, why: 'unavailable', log: 'warn' };
  return { code: CLOSE.internal, message: 'Internal server error', why: 'error', log: 'error' };
}
