import { Pool } from 'pg';
import type { Logger } from 'pino';
import { describeError } from '../database/describe';

/** How often a wait for the slot to be made says what it waits for. */
const WAIT_REPORT_MS = 10_000;
/** The first report, sooner: a slot made at once says nothing. */
const FIRST_WAIT_REPORT_MS = 2_000;

/** The slot's WAL as the server counts it, at a measure. */
export interface SlotMeasure {
  /** WAL kept for the slot: from its restart position to the server's current one. */
  retainedBytes: number;
  /** What the slot has not confirmed yet: from its confirmed position to the server's current one. */
  lagBytes: number;
  /** reserved, extended, unreserved, lost (pg_replication_slots.wal_status). */
  walStatus: string;
  /** What is left before max_slot_wal_keep_size invalidates it; null when unbounded. */
  safeBytes: number | null;
}

/**
 * The decoder's ordinary connection (never a replication one) to the server it decodes: to end a WAL sender that must
 * not stay (a wait given up, a frozen holder's), to say what making a slot waits for, and to measure what the slot
 * holds back. One connection, only on the instance that decodes.
 */
export class SlotWatch {
  private readonly pool: Pool;

  constructor(url: string, connectTimeoutMs: number, private readonly log: Logger) {
    this.pool = new Pool({
      connectionString: url, max: 1, connectionTimeoutMillis: connectTimeoutMs, query_timeout: Math.max(connectTimeoutMs, 5000),
      idleTimeoutMillis: 30_000, allowExitOnIdle: true, application_name: 'tender-bff change decoder watch',
    });
    this.pool.on('error', () => undefined);
  }

  /**
   * Ends a WAL sender named `name` (a decoder's of the same bus, never another program's). A session that gives up a
   * wait on the server must end it there: the server does not read the socket while it waits, so closing it changes nothing.
   */
  async endSender(pid: number, name: string): Promise<void> {
    await this.pool.query(`select pg_terminate_backend(pid) from pg_stat_activity where pid = $1 and backend_type = 'walsender' and application_name = $2`,
      [pid, name]).catch((err) => this.log.warn({ pid, error: describeError(err) }, 'change events: a WAL sender of the decoder could not be ended'));
  }

  /** Waits (at most 5 s) until no connection streams `slot`: an ended WAL sender takes a moment to go. */
  async untilInactive(slot: string): Promise<void> {
    for (const until = Date.now() + 5000; Date.now() < until;) {
      const { rows } = await this.pool.query<{ active: boolean }>('select active from pg_replication_slots where slot_name = $1', [slot]).catch(() => ({ rows: [] }));
      if (!rows[0]?.active) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Runs `making` (CREATE_REPLICATION_SLOT on WAL sender `pid`), saying meanwhile what it waits for: making a logical
   * slot waits for every transaction that held a transaction id when it began, in every database of the server.
   */
  async whileWaiting<T>(pid: number, slot: string, making: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const started = Date.now();
    const report = async () => {
      const blocker = await this.blocker(pid);
      if (done) return;
      this.log.warn({ slot, waiting_ms: Date.now() - started, ...blocker },
        blocker ? 'change events: making the slot waits for a transaction open since before it began (logical decoding must see it end); subscribers get no updates meanwhile'
          : 'change events: making the slot waits for the server; subscribers get no updates meanwhile');
      timer = setTimeout(() => void report(), WAIT_REPORT_MS);
    };
    timer = setTimeout(() => void report(), FIRST_WAIT_REPORT_MS);
    try {
      return await making();
    } finally {
      done = true;
      clearTimeout(timer);
    }
  }

  /** What the slot holds back now; null when it cannot be read (the slot gone, the server away). */
  async measure(slot: string): Promise<SlotMeasure | null> {
    const { rows } = await this.pool.query<{ retained: string | null; lag: string | null; wal_status: string; safe: string | null }>(`
      select (pg_current_wal_lsn() - restart_lsn)::text as retained, (pg_current_wal_lsn() - confirmed_flush_lsn)::text as lag,
        wal_status, safe_wal_size::text as safe
      from pg_replication_slots where slot_name = $1`, [slot]).catch(() => ({ rows: [] }));
    const row = rows[0];
    if (!row) return null;
    return { retainedBytes: Number(row.retained ?? 0), lagBytes: Number(row.lag ?? 0), walStatus: row.wal_status, safeBytes: row.safe === null ? null : Number(row.safe) };
  }

  end(): Promise<void> {
    return this.pool.end();
  }

  /** The oldest transaction the WAL sender `pid` waits for: its process, database, age and what it runs. */
  private async blocker(pid: number): Promise<Record<string, unknown> | null> {
    const { rows } = await this.pool.query<Record<string, unknown>>(`
      select a.pid as blocking_pid, a.datname as blocking_database, a.application_name as blocking_application,
        a.state as blocking_state, (extract(epoch from now() - a.xact_start) * 1000)::bigint as blocking_open_ms
      from pg_stat_activity a where a.pid = any(pg_blocking_pids($1))
      order by a.xact_start limit 1`, [pid]).catch(() => ({ rows: [] }));
    if (rows[0]) return { ...rows[0], blocking_open_ms: Number(rows[0].blocking_open_ms) };
    // A prepared transaction has no process: pg_blocking_pids names none.
    const prepared = await this.pool.query<Record<string, unknown>>(`select gid as blocking_prepared_transaction, database as blocking_database,
      (extract(epoch from now() - prepared) * 1000)::bigint as blocking_open_ms from pg_prepared_xacts order by prepared limit 1`).catch(() => ({ rows: [] }));
    return prepared.rows[0] ? { ...prepared.rows[0], blocking_open_ms: Number(prepared.rows[0].blocking_open_ms) } : null;
  }
}
