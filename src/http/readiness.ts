import { Pool } from 'pg';
import { ServiceUnavailableError } from '../errors';
import type { Lifecycle } from './lifecycle';

/** The change listener, as readiness sees it. */
export interface ListenerStatus {
  /** Whether it listens, after an attempt now when it does not, bounded by `timeoutMs`. */
  ensureListening(timeoutMs: number): Promise<boolean>;
}

/**
 * What `/readyz` answers (decisions.md section 8, docs/faults.md): ready while the database answers within
 * the readiness bound and the process is not shutting down.
 *
 * The check has a pool of its own, one connection: it never waits behind requests queued for the request
 * pool, so a saturated pool does not pull every instance out of the load balancer at once, while a database
 * that does not answer does.
 *
 * From the moment a shutdown begins (`lifecycle.shuttingDown`, src/shutdown.ts) every check answers 503 at once.
 *
 * While the instance does not listen to the database's change notifications (src/events/change-listener.ts),
 * its subscribers get no updates: the check asks the listener to reconnect at once, and answers 503 when it
 * cannot within the bound, so that new clients go to an instance that can serve them.
 */
export class Readiness {
  private readonly pool: Pool;

  constructor(databaseUrl: string, private readonly timeoutMs: number, private readonly lifecycle: Lifecycle, private readonly listener: ListenerStatus | null = null) {
    this.pool = new Pool({
      connectionString: databaseUrl,
      max: 1,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      statement_timeout: timeoutMs,
      idleTimeoutMillis: 60000,
      allowExitOnIdle: true,
      application_name: 'tender-bff readiness',
    });
    // A connection dropped while idle (database restarted) is discarded by the pool; nothing to do here.
    this.pool.on('error', () => undefined);
  }

  /** Resolves when ready; throws ServiceUnavailableError (503 + Retry-After) otherwise, within the bound. */
  async check(): Promise<void> {
    if (this.lifecycle.shuttingDown) throw new ServiceUnavailableError('The service is shutting down');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([this.pool.query('select 1'), deadline]);
    } catch (err) {
      throw new ServiceUnavailableError('The database is unavailable', { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (this.listener && !(await this.listener.ensureListening(this.timeoutMs))) {
      throw new ServiceUnavailableError('Change events are not being received: the change listener is reconnecting to the database');
    }
    if (this.lifecycle.shuttingDown) throw new ServiceUnavailableError('The service is shutting down');
  }

  /** Closes the check's connection (at shutdown, after the HTTP server). */
  async close(): Promise<void> {
    await this.pool.end();
  }
}
