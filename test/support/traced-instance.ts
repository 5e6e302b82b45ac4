/**
 * The service (src/server.ts) with tracing on and an in-memory exporter, for test/tracing.test.ts: started before the
 * server is loaded, as src/platform/telemetry/preload.ts starts it in production. Over the IPC channel, `spans`
 * answers the finished spans so far.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../src/platform/telemetry/sdk';

const exporter = new InMemorySpanExporter();
startTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

process.on('message', (message) => {
  if (message !== 'spans') return;
  process.send!(exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    kind: s.kind,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId ?? null,
    attributes: s.attributes,
  })));
});

// Loaded after the SDK has started: `pg` and `http` are patched when the server first requires them.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../../src/server');
