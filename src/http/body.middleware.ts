import { bodyParser } from '@koa/bodyparser';
import { UnsupportedMediaTypeError } from '../errors';
import type { AppMiddleware } from './state';

export const BODY_LIMIT = '1mb';

function hasBody(ctx: Parameters<AppMiddleware>[0]): boolean {
  const length = ctx.get('Content-Length');
  return (length !== '' && length !== '0') || ctx.get('Transfer-Encoding') !== '';
}

/** JSON bodies up to 1 MiB; a body of another type where JSON is expected is a 415. */
export function jsonBody(): AppMiddleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT, jsonStrict: true }) as unknown as AppMiddleware;
  return async (ctx, next) => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) && hasBody(ctx) && !ctx.is('application/json', '+json')) {
      throw new UnsupportedMediaTypeError('The request body must be JSON (Content-Type: application/json)');
    }
    return parse(ctx, next);
  };
}

/** Form bodies (the token endpoint), up to 1 MiB. */
export function formBody(): AppMiddleware {
  return bodyParser({ enableTypes: ['form'], formLimit: BODY_LIMIT }) as unknown as AppMiddleware;
}
