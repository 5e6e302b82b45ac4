import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { ReplicaConfig } from './config';
import { describeDatabase, type ReplicaEndpoint } from './database';
import { WRITES_CHANNEL } from './events/change-event';
import { databaseFault } from './errors';

/**
 * Read replicas (README, "Scale out"): read-only work of a request goes to a streaming replica of the primary
 * when one is fresh enough for that caller, else to the primary.
 *
 * - **Fresh enough.** Every `pollMs` each instance reads the primary's WAL position (`pg_current_wal_insert_lsn`)
 *   and each replica's replay position (`pg_last_wal_replay_lsn`). A replica's lag is how long ago the primary
 *   had WAL the replica has not replayed yet (known to within a poll, rounded up); past `maxLagMs`, or unreachable,
 *   or not a standby at all, it is skipped until a poll finds it well again.
 * - **Read your writes.** A unit of work that committed (src/database-limits.ts sees every COMMIT) ends with one
 *   statement on the primary that reads its WAL position and notifies it on `tender_writes`, with the caller's id;
 *   every instance keeps "this caller wrote up to LSN x" until any usable replica must have it (`maxLagMs` and two
 *   polls). The answer carries the position as `X-Consistency-Token`; a later request that sends it back is held
 *   to it too, whoever and wherever it is. A read goes to a replica only if its known replay position has reached
 *   both; else to the primary.
 * - **Failures.** A replica that fails under a request is skipped at once; the request's reads are run again on
 *   the primary (src/rest/mount.ts, src/graphql/executor.ts): a replica that goes away answers no 5xx.
 */

/** A PostgreSQL WAL position (`XXXXXXXX/XXXXXXXX`), as a number that compares. */
export type Lsn = bigint;

const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

/** Parses `X/Y`; null when it is not one. */
export function parseLsn(text: string | null | undefined): Lsn | null {
  const m = text ? LSN.exec(text.trim()) : null;
  return m ? (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`) : null;
}

export function formatLsn(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/**
 * The primary's insert position points past the header of the next WAL page when the last record ended at a page
 * boundary, while a replica that replayed that record reports the boundary: up to a long page header (40 bytes)
 * apart for the same WAL. Lag allows for it; a caller's required position does not (it errs towards the primary).
 */
const PAGE_HEADER = 40n;

/** Longest an answer to a write waits for the instance to hear its own write notification (afterWrite). */
const HEARD_WAIT_MS = 50;

/**
 * Errors of a read on a replica that the primary would not have: the replica gone (a connection fault), or a
 * statement cancelled because recovery needed what it read (40001 "conflict with recovery"). The read is run
 * again on the primary.
 */
export function replicaFault(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown; previous?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    if (e.code === '40001' && typeof e.message === 'string' && /conflict with recovery/.test(e.message)) return true;
    e = (e.cause ?? e.previous) as typeof e;
  }
  return databaseFault(err) === 'down';
}

/** What the router knows of one replica. */
export interface ReplicaState {
  /** host:port/database, never a password: the `replica` label of the metrics. */
  name: string;
  orm: MikroORM;
  reachable: boolean;
  /** In recovery (a standby); a promoted server is not a replica of this primary any more. */
  standby: boolean;
  /** Replay position at the last poll (a lower bound of what it has now). */
  replayLsn: Lsn | null;
  /** Milliseconds behind the primary at the last poll; null while unknown. */
  lagMs: number | null;
}

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
  log: Logger;
  /** Each poll's outcome, per replica (metrics). */
  onPoll?(replica: ReplicaState): void;
}

export class ReadRouter {
  readonly replicas: ReplicaState[];
  /** The primary's positions at the recent polls, oldest first: how long ago it had what a replica lacks. */
  private samples: Array<{ at: number; lsn: Lsn }> = [];
  /** Per caller, the position of their last committed write, until every usable replica must have it. */
  private writes = new Map<string, { lsn: Lsn; until: number }>();
  /** Per caller, the last write position heard on WRITES_CHANNEL, and who waits to hear one (afterWrite). */
  private heardWrites = new Map<string, Lsn>();
  private hearing = new Map<string, Array<{ lsn: Lsn; done(): void }>>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private next = 0;
  private readonly probes: Pool[];

  constructor(private readonly options: ReadRouterOptions) {
    this.replicas = options.replicas.map((r) => ({
      name: describeDatabase(r.url), orm: r.orm, reachable: false, standby: false, replayLsn: null, lagMs: null,
    }));
    this.probes = options.replicas.map((r) => r.probes);
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

  /** Whether `replica` may take reads now, for work that needs position `minLsn` (null: anything). */
  usable(replica: ReplicaState, minLsn: Lsn | null): boolean {
    return replica.reachable && replica.standby && replica.lagMs !== null && replica.lagMs <= this.options.config.maxLagMs
      && replica.replayLsn !== null && (minLsn === null || replica.replayLsn >= minLsn);
  }

  /** The position a read of `userId` must see: their last write's (kept) and what their request sent. */
  required(userId: string | null, token: Lsn | null): Lsn | null {
    const kept = userId ? this.writes.get(userId) : undefined;
    const write = kept && kept.until > Date.now() ? kept.lsn : null;
    if (kept && !write) this.writes.delete(userId!);
    if (write === null) return token;
    return token === null || write > token ? write : token;
  }

  /**
   * Where the read-only work of a request runs: a usable replica that has replayed what the caller must see
   * (in turn, when several), else the primary's `primary` entity manager.
   */
  route(primary: EntityManager, userId: string | null, token: Lsn | null): ReadRoute {
    const minLsn = this.required(userId, token);
    const candidates = this.replicas.filter((r) => this.usable(r, minLsn));
    if (!candidates.length) return { em: primary, replica: null };
    const replica = candidates[this.next++ % candidates.length];
    return { em: replica.orm.em.fork(), replica };
  }

  /** A replica failed under a request: skipped until a poll finds it reachable again. */
  failed(replica: ReplicaState, err: unknown): void {
    if (!replica.reachable) return;
    replica.reachable = false;
    this.options.log.warn({ replica: replica.name, error: (err as Error)?.message?.split('\n')[0] }, 'replica failed under a request: its reads go to the primary until it answers again');
    this.options.onPoll?.(replica);
  }

  /**
   * A write of `userId` committed up to `lsn` (this instance's, or another's heard on WRITES_CHANNEL): their reads
   * need it until every replica that may serve them must have it.
   */
  wrote(userId: string, lsn: Lsn): void {
    const kept = this.writes.get(userId);
    const until = Date.now() + this.options.config.maxLagMs + 2 * this.options.config.pollMs;
    if (!kept || kept.lsn < lsn) this.writes.set(userId, { lsn, until });
    else kept.until = Math.max(kept.until, until);
  }

  /** `<user id> <lsn>` heard on WRITES_CHANNEL, from any instance, this one included. */
  heard(payload: string): void {
    const [userId, text] = payload.split(' ');
    const lsn = parseLsn(text);
    if (!userId || lsn === null) return;
    this.wrote(userId, lsn);
    const before = this.heardWrites.get(userId);
    if (before === undefined || before < lsn) this.heardWrites.set(userId, lsn);
    const waiting = this.hearing.get(userId);
    if (!waiting) return;
    const still = waiting.filter((w) => (w.lsn <= lsn ? (w.done(), false) : true));
    if (still.length) this.hearing.set(userId, still);
    else this.hearing.delete(userId);
  }

  /**
   * After a unit of work of `userId` (null: no caller, such as a sign-in) committed: the primary's WAL position,
   * which covers the commit, kept for the caller and told to every instance. Resolves once this instance heard its
   * own notification (at most HEARD_WAIT_MS): the server signals every listener together, so the other instances
   * have it then too, before the answer can reach the client and its next request another instance. Returns the
   * position as the answer's `X-Consistency-Token`.
   */
  async afterWrite(em: EntityManager, userId: string | null): Promise<string> {
    const connection = em.getConnection();
    if (!userId) {
      const [row] = await connection.execute<Array<{ lsn: string }>>('select pg_current_wal_insert_lsn()::text as lsn');
      return row.lsn;
    }
    const [row] = await connection.execute<Array<{ lsn: string }>>(
      `with w as (select pg_current_wal_insert_lsn()::text as lsn) select lsn, pg_notify('${WRITES_CHANNEL}', ? || ' ' || lsn) from w`, [userId]);
    const lsn = parseLsn(row.lsn)!;
    this.wrote(userId, lsn);
    if ((this.heardWrites.get(userId) ?? -1n) < lsn) {
      await new Promise<void>((resolve) => {
        const waiter = { lsn, done: () => { clearTimeout(timer); resolve(); } };
        const timer = setTimeout(() => {
          const rest = (this.hearing.get(userId) ?? []).filter((w) => w !== waiter);
          if (rest.length) this.hearing.set(userId, rest);
          else this.hearing.delete(userId);
          resolve();
        }, HEARD_WAIT_MS);
        this.hearing.set(userId, [...(this.hearing.get(userId) ?? []), waiter]);
      });
    }
    return row.lsn;
  }

  private poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    const { config, log } = this.options;
    const now = Date.now();
    let primary: Lsn | null = null;
    try {
      primary = parseLsn(await this.options.primaryLsn());
    } catch (err) {
      log.debug({ error: (err as Error).message }, 'replicas: the primary\'s WAL position could not be read');
    }
    if (primary !== null) this.samples.push({ at: now, lsn: primary });
    // Enough history to tell any lag up to the bound, and one sample older than it.
    const horizon = now - config.maxLagMs - 2 * config.pollMs;
    while (this.samples.length > 1 && this.samples[1].at < horizon) this.samples.shift();
    for (const [userId, kept] of this.writes) {
      if (kept.until > now) continue;
      this.writes.delete(userId);
      this.heardWrites.delete(userId);
    }

    await Promise.all(this.replicas.map(async (replica, i) => {
      const was = this.usable(replica, null);
      try {
        const { rows } = await this.probes[i].query<{ standby: boolean; lsn: string | null }>(
          'select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as lsn');
        replica.reachable = true;
        replica.standby = rows[0].standby;
        replica.replayLsn = parseLsn(rows[0].lsn);
        replica.lagMs = primary === null ? null : this.lag(replica.replayLsn, now);
      } catch (err) {
        replica.reachable = false;
        replica.lagMs = null;
        if (was) log.warn({ replica: replica.name, error: (err as Error).message.split('\n')[0] }, 'replica unreachable: its reads go to the primary until it answers again');
      }
      const is = this.usable(replica, null);
      if (was !== is) {
        if (is) log.info({ replica: replica.name, lag_ms: replica.lagMs }, 'replica usable: reads go to it again');
        else if (replica.reachable && !replica.standby) log.error({ replica: replica.name }, 'replica is not a standby (promoted?): reads stay on the primary');
        else if (replica.reachable) log.warn({ replica: replica.name, lag_ms: replica.lagMs, max_lag_ms: config.maxLagMs }, 'replica too far behind: its reads go to the primary until it catches up');
      }
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
    if (!latest || replayed + PAGE_HEADER >= latest.lsn) return 0;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      if (this.samples[i].lsn <= replayed + PAGE_HEADER) return now - this.samples[i].at;
    }
    return Number.POSITIVE_INFINITY;
  }
}
