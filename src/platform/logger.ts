import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config';

/** Structured JSON logs on stdout (or on `destination`, which tests read). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = { level: config.logLevel, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}
export type { Logger };
