import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { ReplicaConfig } from '../config';
import { describeDatabase } from './describe';
import { type ReplicaEndpoint } from './replica-pools';
import { WRITES_CHANNEL } from '../events/change-event';
import { databaseFault } from '../errors/database-faults';

/**
 * Read replicas (README, "Scale out"): read-only work of a request goes to a streaming replica of the primary
 * when one is fresh enough for that caller, else to the primary.
 *
 * - **Fresh enough.** Every `pollMs` each instance reads the primary's WAL position (`pg_current_wal_insert_lsn`)
 *   and each replica's replay position (`pg_last_wal_replay_lsn`). A replica's lag is how long ago the primary
 *   had WAL the replica has not replayed yet (known to within a poll, rounded up), plus the time since that poll;
 *   past `maxLagMs`, unreachable, not a standby, or a standby of another cluster, it is skipped until a poll finds
 *   it well again.
 * - **Read your writes.** A caller's COMMIT carries `pg_logical_emit_message(true, 'tender_writes', <user id>)` (src/platform/database/limits.ts):
 *   every instance hears that the caller wrote, and holds their reads to the primary until its next poll's sample
 *   of the primary's position (taken after it heard, so past the commit), then to a replica that has replayed
 *   that far, until every usable replica must have it (`maxLagMs` and two polls). The instance that served the
 *   write reads the position itself (one statement, no transaction) and answers it as `X-Consistency-Token`; a
 *   later request that sends it back is held to it too, whoever and wherever it is.
 * - **Hearing.** While the instance does not hear the database's notifications, and for that window after it
 *   hears again (and after start), writes told meanwhile may have been missed: every read goes to the primary.
 * - **Failures.** A replica that fails under a request is skipped at once; the request's reads are run again on
 *   the primary (src/platform/http/read-routing.ts, src/platform/graphql/context.ts): a replica that goes away answers no 5xx.
 */

/** A PostgreSQL WAL position (`XXXXXXXX/XXXXXXXX`), as a number that compares. */
export type Lsn = bigint;

const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

/** Parses `X/Y`; null when it is not one. */
export function parseLsn(text: string | null | undefined): Lsn | null {
  const m = text ? LSN.exec(text.trim()) : null;
  return m ? (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`) : null;
}

/** Held to nothing a replica can have: the primary. */
const PRIMARY_ONLY: Lsn = 1n << 64n;

const WAL_PAGE = 8192n;

/**
 * Whether a replica that replayed up to `replayed` has everything the primary had at `primary` (its insert
 * position). When the last record ended at a page boundary, the insert position points past the next page's
 * header (24 bytes; 40 for a segment's first page), while the replica reports the boundary: the same WAL.
 */
function caughtUp(replayed: Lsn, primary: Lsn): boolean {
  if (replayed >= primary) return true;
  const offset = primary % WAL_PAGE;
  return (offset === 24n || offset === 40n) && replayed === primary - offset;
}

/** Longest an answer to a write waits for the instance to hear its own write notification (afterWrite). */
const HEARD_WAIT_MS = 50;

/**
 * Errors of a read on a replica that the primary would not have: the replica gone (a connection fault), its pool
 * saturated or its connection not made in time, or a statement recovery cancelled ("conflict with recovery",
 * SQLSTATE 40001, 40P01 or 57P04). The read is run again on the primary.
 */
export function replicaFault(err: unknown): boolean {
  for (let e = err as { message?: unknown; cause?: unknown; previous?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    if (typeof e.message === 'string' && /conflict with recovery/.test(e.message)) return true;
    e = (e.cause ?? e.previous) as typeof e;
  }
  return databaseFault(err) !== null && !isStatementTimeout(err);
}

/** A statement the replica ran to its bound: the primary would run as long; not the replica's fault. */
function isStatementTimeout(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown; previous?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    if (e.code === '57014') return true;
    e = (e.cause ?? e.previous) as typeof e;
  }
  return false;
}

/** What the router knows of one replica. */
export interface ReplicaState {
  /** host:port/database, never a password: the `replica` label of the metrics. */
  name: string;
  endpoint: ReplicaEndpoint;
  reachable: boolean;
  /** In recovery (a standby); a promoted server is not a replica of this primary any more. */
  standby: boolean;
  /** Its cluster is the primary's (same `system_identifier`); null while it could not be told. */
  sameCluster: boolean | null;
  /** Replay position at the last poll (a lower bound of what it has now). */
  replayLsn: Lsn | null;
  /** Milliseconds behind the primary at the last poll; null while unknown. */
  lagMs: number | null;
  /** When a poll last succeeded. */
  polledAt: number;
  /**
   * What the last poll found, as logged: a change is logged once. Kept rather than recomputed from the clock,
   * since a late poll makes the replica look stale before it runs, which would hide the change it finds.
   */
  health: ReplicaHealth;
}

type ReplicaHealth = 'unknown' | 'usable' | 'unreachable' | 'other cluster' | 'promoted' | 'behind';

/** Where one unit of read-only work runs. */
export interface ReadRoute {
  em: EntityManager;
  /** The replica, or null for the primary. */
  replica: ReplicaState | null;
}

export interface ReadRouterOptions {
  config: ReplicaConfig;
  replicas: ReplicaEndpoint[];
  /** The primary's WAL insert position, through the probe pool. */
  primaryLsn(): Promise<string>;
  /** The primary's `system_identifier`, or null where the role may not read it. */
  primaryCluster(): Promise<string | null>;
  log: Logger;
  /** Each poll's outcome, per replica (metrics). */
  onPoll?(replica: ReplicaState): void;
}

/** The cluster a server belongs to (pg_basebackup copies it): a replica of this primary has the primary's. */
export const CLUSTER_SQL = 'select system_identifier::text as id from pg_control_system()';

export class ReadRouter {
  readonly replicas: ReplicaState[];
  /** The primary's positions at the recent polls, oldest first: how long ago it had what a replica lacks. */
  private samples: Array<{ at: number; lsn: Lsn }> = [];
  /** Per caller, the position of their last committed write, until every usable replica must have it. */
  private writes = new Map<string, { lsn: Lsn; until: number }>();
  /** Per caller, when a write of theirs was heard, until a sample of the primary taken after gives its position. */
  private heard = new Map<string, number>();
  /** Writes of this instance waiting to hear their own notification (afterWrite). */
  private waiting = new Map<string, Array<() => void>>();
  private hearing = false;
  /** Until then every read goes to the primary: writes told while the instance did not hear are not known. */
  private primaryUntil = Number.POSITIVE_INFINITY;
  private primaryCluster: string | null | undefined;
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private next = 0;

  constructor(private readonly options: ReadRouterOptions) {
    this.replicas = options.replicas.map((endpoint) => ({
      name: describeDatabase(endpoint.url), endpoint, reachable: false, standby: false, sameCluster: null, replayLsn: null, lagMs: null, polledAt: 0, health: 'unknown',
    }));
  }

  /** How long a write must be kept for: past it, every replica that may serve reads has it. */
  private get window(): number {
    return this.options.config.maxLagMs + 2 * this.options.config.pollMs;
  }

  /** Polls once (so that the first requests can use the replicas), then every pollMs. */
  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.options.config.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.polling?.catch(() => undefined);
  }

  /**
   * Whether the instance hears the database's notifications (src/platform/events/change-listener.ts): writes of other
   * instances are known only while it does, and those told while it did not are not known for a window after.
   */
  setHearing(hearing: boolean): void {
    if (hearing && !this.hearing) this.primaryUntil = Date.now() + this.window;
    if (!hearing) this.primaryUntil = Number.POSITIVE_INFINITY;
    this.hearing = hearing;
  }

  /**
   * Writes of other instances may have been missed (a gap in the change stream, src/platform/events/change-listener.ts):
   * reads go to the primary for a window, after which every replica that may serve them has what was missed.
   */
  missedWrites(): void {
    this.primaryUntil = Math.max(this.primaryUntil, Date.now() + this.window);
  }

  /**
   * Whether `replica` may take reads now, for work that needs position `minLsn` (null: anything). Judged from the
   * positions the servers reported, not from how punctually this instance's timers fire: its lag now is at most its
   * lag at the last poll plus the time since (were it to have replayed nothing meanwhile), and its replay position
   * only grows. So a poll that comes late, on a busy instance, leaves the replica usable for as long as that bound
   * holds, where a bound on the poll's age sent every read to the primary exactly when the instance was busiest.
   * A replica that went away since is found by the read that fails on it (run again on the primary).
   */
  usable(replica: ReplicaState, minLsn: Lsn | null, now = Date.now()): boolean {
    return replica.endpoint.orm !== null && replica.reachable && replica.standby && replica.sameCluster !== false
      && replica.lagMs !== null && replica.lagMs + Math.max(0, now - replica.polledAt) <= this.options.config.maxLagMs
      && replica.replayLsn !== null && (minLsn === null || caughtUp(replica.replayLsn, minLsn));
  }

  /** The position a read of `userId` must see: their last write's (kept or heard) and what their request sent. */
  required(userId: string | null, token: Lsn | null, now = Date.now()): Lsn | null {
    let need = token;
    if (userId) {
      if (this.heard.has(userId)) return PRIMARY_ONLY;
      const kept = this.writes.get(userId);
      if (kept && kept.until > now && (need === null || kept.lsn > need)) need = kept.lsn;
    }
    return need;
  }

  /**
   * Where the read-only work of a request runs: a usable replica that has replayed what the caller must see
   * (in turn, when several), else the primary's `primary` entity manager.
   */
  route(primary: EntityManager, userId: string | null, token: Lsn | null): ReadRoute {
    const now = Date.now();
    if (now < this.primaryUntil) return { em: primary, replica: null };
    const minLsn = this.required(userId, token, now);
    const candidates = this.replicas.filter((r) => this.usable(r, minLsn, now));
    if (!candidates.length) return { em: primary, replica: null };
    const replica = candidates[this.next++ % candidates.length];
    return { em: replica.endpoint.orm!.em.fork(), replica };
  }

  /** A replica failed under a request: skipped until a poll finds it reachable again. */
  failed(replica: ReplicaState, err: unknown): void {
    if (!replica.reachable) return;
    replica.reachable = false;
    this.options.log.warn({ replica: replica.name, error: (err as Error)?.message?.split('\n')[0] }, 'replica failed under a request: its reads go to the primary until it answers again');
    this.options.onPoll?.(replica);
  }

  /** Their reads must see `lsn` until every replica that may serve them must have it. */
  private keep(userId: string, lsn: Lsn, now = Date.now()): void {
    const kept = this.writes.get(userId);
    if (!kept || kept.lsn < lsn) this.writes.set(userId, { lsn, until: now + this.window });
    else kept.until = Math.max(kept.until, now + this.window);
  }

  /** `<user id>` heard on WRITES_CHANNEL: a write of theirs committed, on any instance (this one included). */
  heardWrite(payload: string): void {
    const userId = payload.trim().toLowerCase();
    if (!userId) return;
    if (!this.heard.has(userId)) this.heard.set(userId, Date.now());
    for (const done of this.waiting.get(userId) ?? []) done();
    this.waiting.delete(userId);
  }

  /**
   * After a unit of work committed (src/platform/http/read-routing.ts): the primary's position, past the commit. For a
   * caller, kept for their reads; when the commits did not tell every instance themselves (`told` false: a write
   * outside a transaction), told now. Resolves once this instance heard the caller's notification (at most
   * HEARD_WAIT_MS, and not while it does not hear): the server signals every listener together, so the other
   * instances have it then too, before the answer can reach the client and its next request another instance.
   * Returns the position, the answer's `X-Consistency-Token`.
   */
  async afterWrite(em: EntityManager, userId: string | null, told: boolean): Promise<string> {
    const connection = em.getConnection();
    const heard = userId && this.hearing ? this.heardOwn(userId) : null;
    const [row] = userId && !told
      ? await connection.execute<Array<{ lsn: string }>>(
        `with w as (select pg_current_wal_insert_lsn()::text as lsn) select lsn, pg_logical_emit_message(true, '${WRITES_CHANNEL}', ?) from w`, [userId])
      : await connection.execute<Array<{ lsn: string }>>('select pg_current_wal_insert_lsn()::text as lsn');
    if (userId) this.keep(userId, parseLsn(row.lsn)!);
    await heard;
    return row.lsn;
  }

  /** A write of `userId` committed but its position could not be read: their reads go to the primary for the window. */
  lostWrite(userId: string): void {
    this.keep(userId, PRIMARY_ONLY);
  }

  /** Resolves when a write notification of `userId` is heard from now on, or after HEARD_WAIT_MS. */
  private heardOwn(userId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const rest = (this.waiting.get(userId) ?? []).filter((w) => w !== done);
        if (rest.length) this.waiting.set(userId, rest);
        else this.waiting.delete(userId);
        resolve();
      }, HEARD_WAIT_MS);
      this.waiting.set(userId, [...(this.waiting.get(userId) ?? []), done]);
    });
  }

  private poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    const { config, log } = this.options;
    // Taken before the statement is sent: its answer is past every commit heard before this instant.
    const now = Date.now();
    let primary: Lsn | null = null;
    try {
      primary = parseLsn(await this.options.primaryLsn());
      this.primaryCluster ??= await this.options.primaryCluster().catch(() => null);
    } catch (err) {
      log.debug({ error: (err as Error).message }, 'replicas: the primary\'s WAL position could not be read');
    }
    if (primary !== null) {
      this.samples.push({ at: now, lsn: primary });
      // Writes heard before this sample was asked for are covered by it.
      for (const [userId, at] of this.heard) {
        if (at >= now) continue;
        this.heard.delete(userId);
        this.keep(userId, primary, now);
      }
    }
    // Enough history to tell any lag up to the bound, and one sample older than it.
    const horizon = now - this.window;
    while (this.samples.length > 1 && this.samples[1].at < horizon) this.samples.shift();
    for (const [userId, kept] of this.writes) if (kept.until <= now) this.writes.delete(userId);

    await Promise.all(this.replicas.map(async (replica) => {
      try {
        const { rows } = await replica.endpoint.probes.query<{ standby: boolean; lsn: string | null }>(
          'select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as lsn');
        replica.reachable = true;
        replica.standby = rows[0].standby;
        replica.replayLsn = parseLsn(rows[0].lsn);
        replica.lagMs = primary === null ? null : this.lag(replica.replayLsn, now);
        replica.polledAt = Date.now();
        if (replica.sameCluster === null && this.primaryCluster) {
          const cluster = await replica.endpoint.probes.query<{ id: string }>(CLUSTER_SQL).then((r) => r.rows[0].id, () => null);
          if (cluster) replica.sameCluster = cluster === this.primaryCluster;
        }
        if (!replica.endpoint.orm) await replica.endpoint.open();
      } catch (err) {
        replica.reachable = false;
        replica.lagMs = null;
        if (replica.health !== 'unreachable') log.warn({ replica: replica.name, error: (err as Error).message.split('\n')[0] }, 'replica unreachable: its reads go to the primary until it answers again');
      }
      const health: ReplicaHealth = !replica.reachable ? 'unreachable'
        : replica.sameCluster === false ? 'other cluster'
          : !replica.standby ? 'promoted'
            : this.usable(replica, null) ? 'usable' : 'behind';
      if (health !== replica.health) {
        if (health === 'usable') log.info({ replica: replica.name, lag_ms: replica.lagMs }, 'replica usable: reads go to it again');
        else if (health === 'other cluster') log.error({ replica: replica.name }, 'replica is a standby of another cluster (system_identifier differs): reads stay on the primary');
        else if (health === 'promoted') log.error({ replica: replica.name }, 'replica is not a standby (promoted?): reads stay on the primary');
        else if (health === 'behind') log.warn({ replica: replica.name, lag_ms: replica.lagMs, max_lag_ms: config.maxLagMs }, 'replica too far behind: its reads go to the primary until it catches up');
      }
      replica.health = health;
      this.options.onPoll?.(replica);
    }));
  }

  /**
   * How long ago the primary had WAL that `replayed` lacks: 0 when it has all the primary had at the last poll;
   * else the time of the newest sample it has reached (an upper bound, within a poll); beyond the kept history,
   * more than the bound.
   */
  private lag(replayed: Lsn | null, now: number): number {
    if (replayed === null) return Number.POSITIVE_INFINITY;
    const latest = this.samples.at(-1);
    if (!latest || caughtUp(replayed, latest.lsn)) return 0;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      if (caughtUp(replayed, this.samples[i].lsn)) return now - this.samples[i].at;
    }
    return Number.POSITIVE_INFINITY;
  }
}

