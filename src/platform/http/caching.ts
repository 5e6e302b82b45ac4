import etag from '@koa/etag';
import compress from 'koa-compress';
import fresh from 'fresh';
import { constants } from 'node:zlib';
import type { AppMiddleware } from './state';

/**
 * Compression of compressible types (JSON, GraphQL responses, HTML, CSS, JavaScript; never images, PDF,
 * archives or other already compressed types) from 1 KiB on, with brotli or gzip as the client accepts
 * (docs/caching.md). Brotli at quality 4: near gzip's speed for better ratios; zstd (Node 22.15+ only) and
 * deflate are not offered, so every Node line answers alike. A `Cache-Control: no-transform` answer is left
 * as it is.
 */
export function compression(): AppMiddleware {
  return compress({
    threshold: 1024,
    encodingPreference: ['br', 'gzip', 'identity'],
    br: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
    gzip: {},
    deflate: false,
    zstd: false,
  }) as AppMiddleware;
}

/**
 * Answers a GET or HEAD whose validators match with 304 and no body (RFC 9110 section 13.2.2, through
 * `fresh`): If-None-Match, which takes precedence over If-Modified-Since; `*` matches any current
 * representation, so a 2xx read becomes a 304. Unlike koa-conditional-get (Koa's `ctx.fresh`), a request's
 * `Cache-Control: no-cache` does not turn the check off: fetch() adds exactly that header to every request
 * that carries If-None-Match, so no fetch-based client would ever get a 304, and RFC 9110 has the origin
 * server evaluate the conditions whatever the request's cache directives.
 */
export function conditionalGet(): AppMiddleware {
  return async (ctx, next) => {
    await next();
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status < 200 || ctx.status >= 300) return;
    const conditions = { 'if-none-match': ctx.get('If-None-Match') || undefined, 'if-modified-since': ctx.get('If-Modified-Since') || undefined };
    const validators = { etag: ctx.response.get('ETag') || undefined, 'last-modified': ctx.response.get('Last-Modified') || undefined };
    if (fresh(conditions, validators)) {
      ctx.status = 304;
      ctx.body = null;
    }
  };
}

const tag = etag({ weak: true });
const NO_STORE = /(?:^|,)\s*no-store\s*(?:,|$)/i;

/**
 * ETag on successful GET and HEAD answers: a hash of the body, or, for a file streamed from disk, of its size
 * and modification time (no read). Weak (`W/"..."`): one tag names the body whatever its content coding,
 * which the compression middleware chooses afterwards. Answers marked `no-store` (signed downloads) get none:
 * no cache keeps them, so nobody revalidates them, and hashing a large file would be pure cost.
 */
export function entityTags(): AppMiddleware {
  return async (ctx, next) => {
    await next();
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && !NO_STORE.test(ctx.response.get('Cache-Control'))) {
      await tag(ctx as never, async () => undefined);
    }
  };
}

/**
 * Serialises a JSON body once, here, rather than three times (Koa's length, the ETag hash, the
 * compressor, which each stringify an object body).
 */
export function serializeJsonOnce(): AppMiddleware {
  return async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    // Arrays and plain objects only: streams, buffers, Blobs and other bodies Koa sends as they are.
    const proto = body !== null && typeof body === 'object' ? Object.getPrototypeOf(body) : undefined;
    if (Array.isArray(body) || proto === Object.prototype || proto === null) ctx.body = JSON.stringify(body);
  };
}
