import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { NodeSDK, type tracing } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import type { Env } from '../env';

/**
 * Distributed traces (docs/tracing.md), with OpenTelemetry's maintained SDK for Node, configured by its standard
 * environment variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...). Off unless the
 * environment names an exporter: then nothing is loaded and every span helper below is a no-op.
 *
 * What makes the spans: the http instrumentation (a server span per request, W3C `traceparent` honoured; a client
 * span per webhook attempt), the pg instrumentation (a span per SQL statement, its text without values, only under a
 * span of a request or of background work); ours, where no instrumentation sees: the GraphQL operation
 * (graphql-jit's executor, src/platform/graphql/executor.ts), each DataLoader batch, the rate-limit store, each
 * subscription delivery, each webhook attempt.
 */

/** Requests whose traces say nothing (probes, scrapes): no span. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/livez', '/loadz', '/metrics']);

export const TRACER_NAME = 'tender-bff';

/** Whether the environment turns tracing on: an OTLP endpoint, or OTEL_TRACES_EXPORTER naming an exporter. */
export function tracingConfigured(env: Env = process.env): boolean {
  if (['true', '1'].includes((env.OTEL_SDK_DISABLED ?? '').toLowerCase())) return false;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * A statement's text as a trace shows it: the literals written into it (the caller's organization ids, in
 * `any('{...}'::uuid[])`) replaced by `'?'`, as values sent as parameters never appear.
 */
export function statementText(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'/g, "'?'");
}

let sdk: NodeSDK | null = null;

/**
 * Starts the SDK: before `pg` and `http` are first required (src/server.ts imports src/platform/telemetry/preload.ts
 * first), so that their instrumentations patch them. `spanProcessors` replaces the exporter the environment names
 * (tests: an in-memory exporter).
 */
export function startTracing(options: { spanProcessors?: tracing.SpanProcessor[] } = {}): void {
  if (sdk) return;
  // Metrics stay Prometheus's (/metrics), logs pino's: the SDK exports traces only.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ? undefined : 'tender-bff',
    spanProcessors: options.spanProcessors,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0]),
        // The database's own connections and the OTLP export are not HTTP requests of ours.
        ignoreOutgoingRequestHook: (request) => typeof request.path === 'string' && request.path.startsWith('/v1/traces'),
      }),
      // No parent, no span: the delivery loop's polls and the listener's heartbeats would be a trace each.
      new PgInstrumentation({
        requireParentSpan: true,
        enhancedDatabaseReporting: false,
        requestHook: (span, query) => span.setAttribute('db.query.text', statementText(query.query.text)),
      }),
    ],
  });
  sdk.start();
}

/** Exports what is buffered and stops; the last step of a shutdown. */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = null;
  await running?.shutdown().catch(() => undefined);
}

const tracer = () => trace.getTracer(TRACER_NAME);

/**
 * Runs `fn` in a span of its own, a child of the active one; its error marks the span. Without tracing the API's
 * no-op tracer makes this a plain call.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The request's server span (the http instrumentation's), named after the route template, never the raw URL. */
export function nameRequestSpan(method: string, route: string): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}

/** `trace_id` and `span_id` of the active span, for the request's log lines; empty without one. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  // An unsampled span's ids name no trace a backend holds.
  return traceFlags & 1 ? { trace_id: traceId, span_id: spanId } : {};
}
