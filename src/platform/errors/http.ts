import { AppError, MethodNotAllowedError, NotFoundError, PayloadTooLargeError, RetryLaterError, UnsupportedMediaTypeError, ValidationError } from './errors';
import { toAppError } from './database-faults';
import type { AppContext, AppMiddleware } from '../http/state';
import { graphqlErrorOf } from './graphql';

/** Errors raised by Koa and its body parser carry an HTTP status; map the ones we expect. */
function fromHttpError(err: unknown): AppError | null {
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown; expose?: unknown; message?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : null;
  if (status === 413) return new PayloadTooLargeError('The request body is larger than the limit of 1 MiB');
  if (status === 415) return new UnsupportedMediaTypeError('The request body must be JSON (Content-Type: application/json)');
  // The JSON parser refuses `__proto__` keys (prototype poisoning) with a SyntaxError of its own wording.
  if (status === 400 && e.message === 'Object contains forbidden prototype property') {
    return new ValidationError([], 'The request body must not contain the key "__proto__"');
  }
  if (status === 400 && (e.type === 'entity.parse.failed' || err instanceof SyntaxError || /JSON/i.test(String(e.message)))) {
    return new ValidationError([], 'The request body is not valid JSON');
  }
  if (status === 400 && e.type === 'entity.verify.failed') return new ValidationError([], 'The request body is not valid');
  // Whatever else the body parser refuses: a body cut short of its Content-Length, a request aborted midway.
  if (status === 400) return new ValidationError([], 'The request body could not be read');
  return null;
}

/**
 * Each endpoint family answers errors in its own documented shape (decisions.md sections 2, 3 and 8):
 * GraphQL's `errors[]`, OAuth 2's `{error, error_description}` on the token endpoint, REST's `{code, message}`
 * everywhere else. Chosen by path so that failures before routing (body limits, rate limits, a database
 * outage) get the same shape as the handler's own errors.
 */
export type ErrorSurface = 'rest' | 'graphql' | 'oauth';

export function errorSurface(path: string): ErrorSurface {
  if (path === '/graphql') return 'graphql';
  if (path === '/auth/token') return 'oauth';
  return 'rest';
}

/**
 * RFC 6749 section 5.2 error codes, with decisions.md section 8's `slow_down` for 429; any other refusal of
 * the request (400, 404, 413, 414, 415, 431...) is `invalid_request`, a fault of ours `server_error`.
 */
const OAUTH_ERRORS = new Map([[401, 'invalid_client'], [403, 'access_denied'], [429, 'slow_down'], [503, 'temporarily_unavailable']]);

/** The error body of an endpoint family; an unexpected error (null) carries the request id. */
export function errorPayload(surface: ErrorSurface, err: AppError | null, requestId: string | undefined): unknown {
  const status = err?.status ?? 500;
  const message = err?.message ?? 'Internal server error';
  switch (surface) {
    case 'graphql':
      return { errors: [graphqlErrorOf(err, requestId)] };
    case 'oauth':
      return { error: OAUTH_ERRORS.get(status) ?? (status < 500 ? 'invalid_request' : 'server_error'), error_description: message };
    default:
      return err ? { code: status, message, ...err.body() } : { code: 500, message, request_id: requestId };
  }
}

/** Writes an error response in the shape of the endpoint the request went to. */
function writeError(ctx: AppContext, err: unknown): void {
  const known = toAppError(err) ?? fromHttpError(err);
  if (known) {
    if (known instanceof RetryLaterError) ctx.set('Retry-After', String(known.retryAfterSeconds));
    if (known instanceof MethodNotAllowedError) ctx.set('Allow', known.allow.join(', '));
    if (known.status >= 500) ctx.state.log?.warn({ err }, known.message);
  } else {
    ctx.state.log?.error({ err }, 'unexpected error');
  }
  ctx.status = known?.status ?? 500;
  ctx.body = errorPayload(errorSurface(ctx.path), known, ctx.state.requestId);
}

/** Maps every error below it, and unknown routes, to error bodies; nothing internal leaks. */
export function errorsMiddleware(): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new NotFoundError(`No operation at ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      writeError(ctx, err);
    }
  };
}
