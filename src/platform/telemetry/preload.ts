/**
 * Imported first by src/server.ts: tracing starts, when the environment configures it, before any module loads the
 * `pg` and `http` modules that its instrumentations patch (src/platform/telemetry/tracing.ts).
 */
import { startTracing, tracingConfigured } from './tracing';

if (tracingConfigured()) startTracing();
