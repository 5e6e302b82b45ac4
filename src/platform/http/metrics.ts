import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import Router from '@koa/router';
import type { Config } from '../config';
import { UnauthenticatedError } from '../errors/errors';
import { UNMATCHED_ROUTE, type Metrics } from '../metrics';
import { finalStatus, type AppContext, type AppMiddleware, type AppState } from './state';
import { nameRequestSpan } from '../telemetry/tracing';

/** The route template @koa/router matched (`/api/svc/v1/projects/:projectId`), never the raw path. */
function routeOf(ctx: AppContext): string {
  const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  return matched === undefined ? UNMATCHED_ROUTE : String(matched);
}

/**
 * Counts and times every request by method, route template and final status. Outside the compression and
 * conditional GET middleware, so a 304 is counted as a 304.
 */
export function httpMetrics(metrics: Metrics): AppMiddleware {
  return async (ctx, next) => {
    const end = metrics.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const labels = { method: ctx.method, route: routeOf(ctx), status: String(finalStatus(ctx)) };
      metrics.httpRequests.inc(labels);
      end(labels);
      // The trace's request span is named as the metrics label it, never after the raw URL (docs/tracing.md).
      nameRequestSpan(labels.method, labels.route);
    }
  };
}

/** Compares the Authorization header with `Bearer <token>` in constant time (digests of equal length). */
function hasToken(authorization: string | undefined, token: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(authorization ?? ''), digest(`Bearer ${token}`));
}

/** `/metrics` on the service's own port: only outside production without a token, or with METRICS_TOKEN. */
export function metricsRoutes(metrics: Metrics, config: Config): Router<AppState> {
  const router = new Router<AppState>();
  if (!config.metrics.onMainPort) return router;
  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const { token } = config.metrics;
    if (token !== null && !hasToken(ctx.get('Authorization') || undefined, token)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new UnauthenticatedError('The metrics need Authorization: Bearer <METRICS_TOKEN>');
    }
    ctx.type = metrics.contentType;
    ctx.body = await metrics.exposition();
  });
  return router;
}

/** The listener of METRICS_PORT: `GET /metrics` and nothing else, with METRICS_TOKEN when one is set. */
export function metricsServer(metrics: Metrics, token: string | null): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics') return send(404, 'text/plain', 'Not found: the metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'Method not allowed\n', { Allow: 'GET, HEAD' });
    if (token !== null && !hasToken(req.headers.authorization, token)) {
      return send(401, 'text/plain', 'The metrics need Authorization: Bearer <METRICS_TOKEN>\n', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    metrics.exposition().then(
      (text) => send(200, metrics.contentType, text),
      () => send(500, 'text/plain', 'The metrics could not be collected\n'),
    );
  });
}
