import { NodeSDK, type tracing } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { onStopTracing } from './tracing';

/**
 * OpenTelemetry's SDK and the http and pg instrumentations (docs/tracing.md): required only where tracing is on
 * (preload.ts), since loading them costs a start 150-200 ms and some 25 MiB even when nothing is traced.
 */

/** Requests whose traces say nothing (probes, scrapes): no span. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/livez', '/loadz', '/metrics']);

/**
 * A statement's text as a trace shows it: the literals written into it (the caller's organization ids, in
 * `any('{...}'::uuid[])`) replaced by `'?'`, as values sent as parameters never appear.
 */
function statementText(sql: string): string {
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
  const started = sdk;
  onStopTracing(async () => {
    sdk = null;
    await started.shutdown();
  });
}
