import type { Logger } from 'pino';

/** Whether the server the requests write to can take writes, and why not. */
export interface PrimaryState {
  writable: boolean;
  /** Why it takes no writes (in recovery, read-only), or why it could not be asked; null when writable. */
  reason: string | null;
  /** Its `system_identifier`; null where the role may not read it. */
  cluster: string | null;
}

export interface PrimaryWatchOptions {
  /** One row of the server DATABASE_URL reaches, through the probe pool (never behind queued requests). */
  query<T>(sql: string): Promise<T[]>;
  intervalMs: number;
  log: Logger;
  /** The primary changed (now read-only or in recovery, or another cluster): its connections are not to be reused. */
  onChanged(): void;
  /** Each check's outcome (metrics). */
  onState?(state: PrimaryState): void;
}

/**
 * Watches the server the requests write to (DATABASE_URL; issue 33, docs/faults.md "Failover"): every `intervalMs`,
 * and at each readiness check, whether it takes writes (`pg_is_in_recovery()`, `transaction_read_only`), and which
 * cluster it is. A primary that turned into a standby or read-only (a switchover, a demoted primary), or an address
 * that now reaches another cluster, makes the pool give up the connections it made to it (onChanged), so that new
 * ones follow the address to the new primary; readiness answers 503 with the reason while it takes no writes, and
 * recovers by itself once it does.
 */
export class PrimaryWatch {
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<PrimaryState> | null = null;
  private last: PrimaryState = { writable: true, reason: null, cluster: null };
  /** The cluster first seen; a different one later is another database behind the same address. */
  private cluster: string | null | undefined;

  constructor(private readonly options: PrimaryWatchOptions) {}

  get state(): PrimaryState {
    return this.last;
  }

  start(): void {
    this.timer = setInterval(() => void this.check().catch(() => undefined), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Asks the server now (one check at a time: readiness and the timer share it); rejects when it does not answer. */
  check(): Promise<PrimaryState> {
    this.checking ??= this.checkOnce().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async checkOnce(): Promise<PrimaryState> {
    const [row] = await this.options.query<{ recovery: boolean; read_only: string }>(
      `select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') as read_only`);
    // pg_control_system() needs superuser or pg_monitor: without it, the cluster is not told (replicas need it too).
    const cluster = this.cluster === null ? null
      : await this.options.query<{ id: string }>('select system_identifier::text as id from pg_control_system()').then((r) => r[0].id, () => null);
    const reason = row.recovery ? 'the database is in recovery (a standby: a failover or switchover is under way)'
      : row.read_only === 'on' ? 'the database is read-only (transaction_read_only: a demoted primary, or default_transaction_read_only)'
        : null;
    const state: PrimaryState = { writable: reason === null, reason, cluster };
    const { log } = this.options;
    if (this.cluster === undefined) {
      this.cluster = cluster;
    } else if (cluster !== null && this.cluster !== null && cluster !== this.cluster) {
      log.warn({ was: this.cluster, now: cluster }, 'database: DATABASE_URL reaches another cluster now (system_identifier changed): its connections are made anew');
      this.cluster = cluster;
      this.options.onChanged();
    }
    if (this.last.writable && !state.writable) {
      log.warn({ reason }, 'database: the primary takes no writes: writes answer 503, readiness fails, connections are made anew');
      this.options.onChanged();
    } else if (!this.last.writable && state.writable) {
      log.info('database: the primary takes writes again');
      // Connections made while it did not may have reached the old server (an address not yet switched).
      this.options.onChanged();
    }
    this.last = state;
    this.options.onState?.(state);
    return state;
  }
}
