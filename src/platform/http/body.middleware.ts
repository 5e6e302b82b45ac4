import { bodyParser } from '@koa/bodyparser';
import { UnsupportedMediaTypeError, ValidationError } from '../errors/errors';
import { MAX_DEPTH, nestedDeeperThan } from '../validation/validation';
import type { AppContext, AppMiddleware } from './state';

const BODY_LIMIT = '1mb';

/** The content codings the body parser decodes (RFC 9110 section 8.4.1). */
const BODY_ENCODINGS = ['gzip', 'deflate', 'br', 'identity'];

function hasBody(ctx: AppContext): boolean {
  const length = ctx.get('Content-Length');
  return (length !== '' && length !== '0') || ctx.get('Transfer-Encoding') !== '';
}

/**
 * A body in a coding the parser cannot decode is a 415 naming the ones it can (RFC 9110 section 15.5.16).
 * Codings are case-insensitive, the parser compares them exactly: the header is normalised for it.
 */
function checkEncoding(ctx: AppContext): void {
  const header = ctx.get('Content-Encoding');
  if (!header) return;
  const coding = header.trim().toLowerCase();
  if (!BODY_ENCODINGS.includes(coding)) {
    ctx.set('Accept-Encoding', BODY_ENCODINGS.join(', '));
    throw new UnsupportedMediaTypeError(`The request body's Content-Encoding is not supported: use one of ${BODY_ENCODINGS.join(', ')}`);
  }
  ctx.req.headers['content-encoding'] = coding;
}

/**
 * The parser's own refusals carry an HTTP status (413, 415, 400 for bad JSON) and are mapped by the errors
 * middleware. An error without one comes from zlib or brotli: a body that is not the gzip, deflate or br
 * data its Content-Encoding announces, which is the caller's error, not ours.
 *
 * A parser that gives up midway leaves the rest of the body unread, and Node then drops the connection
 * under the keep-alive client's next request: the rest is read and discarded, as Node does itself with a
 * body no handler reads.
 */
function onParseError(err: unknown, ctx: { req: NodeJS.ReadableStream }): never {
  ctx.req.unpipe();
  ctx.req.resume();
  const e = err as { status?: unknown; statusCode?: unknown };
  if (typeof e.status === 'number' || typeof e.statusCode === 'number') throw err;
  throw new ValidationError([], 'The request body could not be decoded as its Content-Encoding says');
}

/**
 * JSON bodies up to 1 MiB, nested at most MAX_DEPTH deep (REST bodies and GraphQL variables alike: refused here, before
 * anything recurses over them, the idempotency key's hash included); a body of another type where JSON is expected is a 415.
 */
export function jsonBody(): AppMiddleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT, jsonStrict: true, onError: onParseError }) as unknown as AppMiddleware;
  return async (ctx, next) => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && hasBody(ctx)) {
      if (!ctx.is('application/json', '+json')) throw new UnsupportedMediaTypeError('The request body must be JSON (Content-Type: application/json)');
      checkEncoding(ctx);
    }
    return parse(ctx, () => {
      // GraphQL's body holds its variables one level down: the same depth is left to them as to a REST body.
      if (nestedDeeperThan(ctx.request.body, MAX_DEPTH + 1)) throw new ValidationError([], 'The request body is nested too deeply');
      return next();
    });
  };
}

/** Form bodies (the token endpoint), up to 1 MiB. */
export function formBody(): AppMiddleware {
  const parse = bodyParser({ enableTypes: ['form'], formLimit: BODY_LIMIT, onError: onParseError }) as unknown as AppMiddleware;
  return async (ctx, next) => {
    if (hasBody(ctx)) checkEncoding(ctx);
    return parse(ctx, next);
  };
}
