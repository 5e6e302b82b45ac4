import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { Env } from '../env';

/**
 * Distributed traces (docs/tracing.md), with OpenTelemetry's maintained SDK for Node, configured by its standard
 * environment variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...). Off unless the
 * environment names an exporter: the SDK (sdk.ts) is then never loaded, and every span helper below, which needs only
 * the API, is the API's no-op.
 *
 * What makes the spans: the http instrumentation (a server span per request, W3C `traceparent` honoured; a client
 * span per webhook attempt), the pg instrumentation (a span per SQL statement, its text without values, only under a
 * span of a request or of background work); ours, where no instrumentation sees: the GraphQL operation
 * (graphql-jit's executor, src/platform/graphql/executor.ts), each DataLoader batch, the rate-limit store, each
 * subscription delivery, each webhook attempt.
 */

const TRACER_NAME = 'tender-bff';

/** Whether the environment turns tracing on: an OTLP endpoint, or OTEL_TRACES_EXPORTER naming an exporter. */
export function tracingConfigured(env: Env = process.env): boolean {
  if (['true', '1'].includes((env.OTEL_SDK_DISABLED ?? '').toLowerCase())) return false;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** How the running SDK stops (sdk.ts sets it when it starts). */
let stopSdk: (() => Promise<void>) | null = null;

export function onStopTracing(stop: () => Promise<void>): void {
  stopSdk = stop;
}

/** Exports what is buffered and stops; the last step of a shutdown. Nothing to do when tracing is off. */
export async function stopTracing(): Promise<void> {
  const stop = stopSdk;
  stopSdk = null;
  await stop?.().catch(() => undefined);
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
