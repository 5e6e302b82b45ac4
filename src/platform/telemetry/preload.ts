/**
 * Imported first by src/server.ts: tracing starts, when the environment configures it, before any module loads the
 * `pg` and `http` modules that its instrumentations patch. The SDK (sdk.ts) is required only then: an import would
 * load it on every start.
 */
import { tracingConfigured } from './tracing';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is configured
if (tracingConfigured()) (require('./sdk') as typeof import('./sdk')).startTracing();
