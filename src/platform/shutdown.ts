import type { Logger } from 'pino';
import type http from 'node:http';
import type { Lifecycle } from './http/lifecycle';

/** What a shutdown works on; the sequence is documented in docs/shutdown.md. */
export interface ShutdownPlan {
  lifecycle: Lifecycle;
  /** The listening server (src/app.ts, listen). */
  running: { server: http.Server; close(): Promise<void> };
  log: Logger;
  /** SHUTDOWN_GRACE_MS: how long the listener stays open after the signal. */
  graceMs: number;
  /** SHUTDOWN_TIMEOUT_MS: the bound of the whole sequence. */
  timeoutMs: number;
  /** Ends the database work still running (endBusySessions); called from interruptAt on, until drained. */
  endDatabaseWork(): Promise<number>;
  /** Releases the rest once no request is left (GraphQL, database). */
  release(): Promise<void>;
}

/** Repeats of endDatabaseWork: a request waiting for a pool connection may start a statement after the first. */
const INTERRUPT_EVERY_MS = 250;

/**
 * When the database work still running is ended: shortly before the timeout, so that the requests it
 * held still have time to answer (503), and never before the grace period is over.
 */
function interruptAt(graceMs: number, timeoutMs: number): number {
  return timeoutMs - Math.min(1000, (timeoutMs - graceMs) / 2);
}

/**
 * The drain, the terminus/lightship pattern without their HTTP servers:
 *  1. at once: readiness answers 503 and every response carries `Connection: close` (src/platform/http/lifecycle.ts);
 *  2. for graceMs the listener still accepts, so requests a load balancer sends before it notices are served;
 *  3. then the listener closes, idle keep-alive connections are closed, and in-flight requests finish;
 *  4. at interruptAt, database work still running is ended (its requests answer 503), again every 250 ms;
 *  5. at timeoutMs, connections still open are cut;
 *  6. once no connection is left: release (GraphQL, database).
 * Resolves true when every request was answered, false when some were cut. The process itself exits at
 * timeoutMs at the latest, whatever release does (src/server.ts).
 */
export async function shutDown(plan: ShutdownPlan): Promise<boolean> {
  const { lifecycle, running, log, graceMs, timeoutMs } = plan;
  lifecycle.shuttingDown = true;
  log.info({ grace_ms: graceMs, timeout_ms: timeoutMs }, 'shutting down: readiness fails, every response closes its connection');

  let drained = false;
  let cut = false;
  let interruptTimer: NodeJS.Timeout | undefined;
  const endDatabaseWork = async () => {
    try {
      const ended = await plan.endDatabaseWork();
      if (ended) log.warn({ sessions: ended }, 'shutting down: ended database work still running');
    } catch (err) {
      log.warn({ err }, 'shutting down: could not end the database work still running');
    }
    if (!drained) interruptTimer = setTimeout(endDatabaseWork, INTERRUPT_EVERY_MS);
  };
  interruptTimer = setTimeout(endDatabaseWork, interruptAt(graceMs, timeoutMs));
  const cutTimer = setTimeout(() => {
    cut = true;
    log.error({ timeout_ms: timeoutMs }, 'shutting down: SHUTDOWN_TIMEOUT_MS reached, cutting the connections still open');
    running.server.closeAllConnections();
  }, timeoutMs);

  await new Promise((resolve) => setTimeout(resolve, graceMs));
  log.info('shutting down: listener closed, finishing the requests in flight');
  await running.close();
  drained = true;
  clearTimeout(interruptTimer);
  clearTimeout(cutTimer);
  await plan.release();
  return !cut;
}
