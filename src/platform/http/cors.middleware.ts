import cors from '@koa/cors';
import type { CorsSettings } from '../config';
import type { AppContext, AppMiddleware } from './state';

/**
 * Request headers a page may send: the bearer token, JSON bodies, its own request id, the headers Apollo's
 * CSRF check accepts (Apollo Client and GraphiQL may add them) and Apollo Client's client-awareness headers.
 */
const CORS_ALLOWED_HEADERS = [
  'Authorization', 'Content-Type', 'X-Request-Id', 'X-Consistency-Token',
  'Apollo-Require-Preflight', 'X-Apollo-Operation-Name', 'apollographql-client-name', 'apollographql-client-version',
];

/** Response headers a page may read besides the CORS-safelisted ones: what decisions.md section 8 tells it to act on. */
const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'WWW-Authenticate', 'X-Consistency-Token'];

/** Every method some route answers (REST uses GET, POST, PUT and DELETE; /graphql GET and POST). */
const CORS_ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];

/** How long a browser may reuse a preflight's answer: Chromium's own ceiling (Firefox's is a day). */
export const CORS_MAX_AGE_SECONDS = 7200;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The Origin header's value when the settings allow it, else null. `*` answers `*` (no credentials are used). */
export function allowedOrigin(origin: string, settings: CorsSettings): string | null {
  if (!origin) return null;
  if (settings.origins === '*') return '*';
  if (settings.origins.includes(origin)) return origin;
  if (settings.loopback && isLoopbackOrigin(origin)) return origin;
  return null;
}

function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  // `url.origin === origin`: exactly what a browser sends, nothing after the port.
  return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname) && url.origin === origin;
}

/**
 * CORS for every path (REST, /graphql, /auth/token), answered by @koa/cors: a preflight from an allowed origin gets
 * 204 with what may be sent; other requests from it get Access-Control-Allow-Origin and the exposed headers, errors
 * included (mounted outside the errors middleware). A request from any other origin gets no CORS header at all and
 * goes on unchanged: the browser, not the server, withholds the answer. Authentication is the bearer token, never
 * a cookie, so credentials stay off.
 */
export function corsMiddleware(settings: CorsSettings): AppMiddleware {
  return cors({
    origin: (ctx) => allowedOrigin((ctx as AppContext).get('Origin'), settings) ?? '',
    allowMethods: CORS_ALLOWED_METHODS,
    allowHeaders: CORS_ALLOWED_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
    credentials: false,
    keepHeadersOnError: true,
  }) as unknown as AppMiddleware;
}
