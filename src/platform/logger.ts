import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config';
import { traceFields } from './telemetry/tracing';

/** Structured JSON logs on stdout (or on `destination`, which tests read). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  // A line written under a sampled span names its trace (docs/tracing.md): from the log to the trace and back.
  const options = { level: config.logLevel, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, mixin: traceFields };
  return destination ? pino(options, destination) : pino(options);
}
export type { Logger };
