import { ServiceUnavailableError } from '../errors/errors';
import type { PrimaryState } from '../database/primary-watch';
import type { Lifecycle } from './lifecycle';

/**
 * What `/readyz` answers (decisions.md section 8, docs/faults.md): ready while the database answers within
 * the readiness bound and the process is not shutting down.
 *
 * `databaseAnswers` goes through a probe pool (src/platform/database/pools.ts), never the request pool: it never waits behind
 * requests queued for a connection, so a saturated pool does not pull every instance out of the load balancer
 * at once, while a database that does not answer does. Behind a transaction pooler, whose server connections
 * every instance shares, the same reasoning puts the `select 1` on the direct connection and asks of the pooler
 * only that it accepts a login (src/app.ts).
 *
 * From the moment a shutdown begins (`lifecycle.shuttingDown`, src/platform/shutdown.ts) every check answers 503 at once.
 *
 * Whether the instance hears the database's changes is not asked (docs/subscriptions.md, "Listener"): what keeps it
 * from hearing (the decoder waiting on a long transaction, the bus away) is shared by every instance, and an answer of
 * 503 from each would leave a balancer no backend at all. A deaf instance still answers correctly (callers looked up at
 * every request, reads on the primary) and tells its subscribers in band; /healthz and the metrics say so.
 *
 * While the server the requests write to takes no writes (in recovery or read-only: a failover or switchover under
 * way, src/platform/database/primary-watch.ts), the check answers 503 with the reason: reads still work, but every
 * write would be refused.
 */
export class Readiness {
  constructor(
    private readonly databaseAnswers: () => Promise<unknown>,
    private readonly timeoutMs: number,
    private readonly lifecycle: Lifecycle,
    private readonly primary: { check(): Promise<PrimaryState>; readonly state: PrimaryState } | null = null,
  ) {}

  /** Resolves when ready; throws ServiceUnavailableError (503 + Retry-After) otherwise, within the bound. */
  async check(): Promise<void> {
    if (this.lifecycle.shuttingDown) throw new ServiceUnavailableError('The service is shutting down');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    let primary: PrimaryState | null = null;
    try {
      await Promise.race([this.databaseAnswers(), deadline]);
      // Behind a transaction pooler the check waits for one of the server connections every instance shares: one
      // that does not come within the bound leaves the state last seen (the database itself answered just above).
      const watch = this.primary;
      if (watch) primary = await Promise.race([watch.check(), deadline.catch(() => watch.state)]);
    } catch (err) {
      throw new ServiceUnavailableError('The database is unavailable', { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (primary && !primary.writable) throw new ServiceUnavailableError(`The database takes no writes: ${primary.reason}`);
    if (this.lifecycle.shuttingDown) throw new ServiceUnavailableError('The service is shutting down');
  }
}
