import { AppError, NotFoundError, PayloadTooLargeError, ServiceUnavailableError, UnsupportedMediaTypeError, ValidationError, toAppError } from '../errors';
import type { AppContext, AppMiddleware } from './state';

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
  if (status === 400 && e.type === 'encoding.unsupported') return new UnsupportedMediaTypeError('Unsupported body encoding');
  return null;
}

/** Writes an error response with the body of decisions.md section 2. */
export function writeError(ctx: AppContext, err: unknown): void {
  const known = toAppError(err) ?? fromHttpError(err);
  if (known) {
    ctx.status = known.status;
    if (known instanceof ServiceUnavailableError) ctx.set('Retry-After', String(known.retryAfterSeconds));
    ctx.body = { code: known.status, message: known.message, ...known.body() };
    if (known.status >= 500) ctx.state.log?.warn({ err }, known.message);
    return;
  }
  ctx.state.log?.error({ err }, 'unexpected error');
  ctx.status = 500;
  ctx.body = { code: 500, message: 'Internal server error', request_id: ctx.state.requestId };
}

/** Maps every error below it, and unknown routes, to JSON error bodies; nothing internal leaks. */
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
