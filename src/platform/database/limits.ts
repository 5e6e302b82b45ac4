import { AsyncLocalStorage } from 'node:async_hooks';
import type { PoolConfig } from '@mikro-orm/core';
import type { DatabaseLimits } from '../config';

/**
 * How much longer than `statement_timeout` the client waits for an answer before it gives up on the server
 * (a frozen host, a lost network): the server's own timeout normally fires first.
 */
const CLIENT_GRACE_MS = 1000;

/** node-postgres's wording when its `query_timeout` ran out. */
const READ_TIMEOUT = 'Query read timeout';

/**
 * What the pool hooks below saw of the unit of work under way (an HTTP request):
 *
 * - `cut`: a connection given up on a read timeout. Its transaction then ended under it, and knex refuses the
 *   statements that follow with 'Transaction query already complete': a database fault only then
 *   (src/platform/errors/database-faults.ts); anywhere else the same words are a programming error.
 * - `wrote`: the primary's pool committed a write of this unit of work, in a transaction (knex's COMMIT) or as a
 *   single statement outside one. Its caller's later reads must see it (read-your-writes, src/platform/database/replicas.ts),
 *   whichever route or resolver wrote: one place sees every commit.
 * - `failure`: the last statement of the unit of work that failed. When it failed because the connection was lost
 *   (the server stopped, the socket broke, even on a BEGIN, whose error knex keeps to itself), the transaction
 *   ended with it, and knex refuses what follows with the same 'Transaction query already complete': a fault too.
 * - `userId`: the caller, once identified; a COMMIT of theirs tells every instance (writesChannel, below).
 * - `told`: every commit of the unit of work told every instance itself (none was a single statement).
 */
interface UnitOfWork {
  cut: boolean;
  failure: unknown;
  wrote: boolean;
  told: boolean;
  userId: string | null;
  /** A COMMIT was sent and its answer never came (the connection lost): the write may have been saved. */
  commitUnknown: boolean;
}

const unitsOfWork = new AsyncLocalStorage<UnitOfWork>();

/** Runs `fn` as one unit of work, which connectionCutHere() and writesHere() report on. */
export function watchingConnectionCuts<T>(fn: () => T): T {
  return unitsOfWork.run({ cut: false, failure: null, wrote: false, told: true, userId: null, commitUnknown: false }, fn);
}

/** Whether a connection of the current unit of work was given up on a read timeout. */
export const connectionCutHere = (): boolean => unitsOfWork.getStore()?.cut === true;

/** Whether a COMMIT of the current unit of work went unanswered (src/platform/errors/database-faults.ts says so to the caller). */
export const commitOutcomeUnknownHere = (): boolean => unitsOfWork.getStore()?.commitUnknown === true;

/** The last failure of a statement of the current unit of work, if any. */
export const lastFailureHere = (): unknown => unitsOfWork.getStore()?.failure ?? null;

/** The writes the current unit of work committed on the primary: none (null), or whether each told every instance. */
export function writesHere(): { told: boolean } | null {
  const unit = unitsOfWork.getStore();
  return unit?.wrote ? { told: unit.told } : null;
}

/** The identified caller of the current unit of work (authentication sets it). */
export function setUnitOfWorkCaller(userId: string): void {
  const unit = unitsOfWork.getStore();
  if (unit) unit.userId = userId;
}

/** knex's COMMIT of a transaction. */
const COMMIT = /^\s*COMMIT\b/i;
/** What a single statement outside a transaction writes with (node-postgres's command tag). */
const WRITE_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request pools' parts in read-your-writes. */
export interface PoolRole {
  /** The primary's request pool: its commits are the unit of work's writes. */
  primary: boolean;
  /**
   * The notification channel that tells every instance of a caller's commit, sent inside the committing
   * transaction itself (no commit of its own): set when the service reads from replicas.
   */
  writesChannel: string | null;
}

/** The parts of a node-postgres client the pool hooks below use. */
interface PgClient {
  readyForQuery: boolean;
  getTransactionStatus(): string | null;
  query: (...args: unknown[]) => unknown;
  connection: { stream: { destroy(): void } };
  host?: string;
  port?: number;
  database?: string;
  /** Set by the hooks below: when it was made, and whether its server turned out unable to take writes. */
  madeAt?: number;
  serverGone?: boolean;
}

/**
 * SQLSTATEs of a server that cannot take writes or is going away: read-only (a standby, a demoted primary,
 * default_transaction_read_only), shutting down, crashed, starting or a standby refusing connections. A connection
 * that met one is not reused, nor any other made to that server before (their server is the same one).
 */
const SERVER_CHANGED = new Set(['25006', '57P01', '57P02', '57P03']);

/** Per server (`host:port/database`), the time before which its connections are not reused (discardConnections). */
const discardBefore = new Map<string, number>();

const serverOf = (conn: { host?: string; port?: number; database?: string }) => `${conn.host ?? ''}:${conn.port ?? ''}/${conn.database ?? ''}`;

/**
 * The connections made so far to the server `url` reaches are not reused: its primary changed (it is in recovery,
 * read-only, or another cluster: src/platform/database/primary-watch.ts). New ones go to whatever the address
 * reaches now: writes follow the new primary as soon as the address does.
 */
export function discardConnections(url: string): void {
  const { hostname, port, pathname } = new URL(url);
  discardBefore.set(serverOf({ host: hostname, port: Number(port || 5432), database: decodeURIComponent(pathname.slice(1)) }), Date.now());
}

/**
 * A connection goes back into service only when idle outside any transaction, to a server that could still take
 * writes when it was last used (discardConnections). One whose statement the client gave up on (still running, or a
 * BEGIN answered late) is destroyed instead: anything sent on it later could run inside that abandoned
 * transaction, and a refused write could commit with it.
 */
const reusableConnection = (conn: PgClient): boolean => conn.readyForQuery && conn.getTransactionStatus() === 'I'
  && !conn.serverGone && madeAfterDiscard(conn);

function madeAfterDiscard(conn: PgClient): boolean {
  const before = discardBefore.get(serverOf(conn));
  return before === undefined || (conn.madeAt ?? 0) > before;
}

/** knex's BEGIN (`BEGIN;`, or `BEGIN TRANSACTION ISOLATION LEVEL ...;`), sent without parameters. */
const BEGIN = /^\s*BEGIN\b[^;]*;?\s*$/i;

/**
 * Wraps the one form of `query` knex calls, `query(config, callback)`:
 *
 * - When node-postgres gives up waiting for a statement it keeps the connection, and the ROLLBACK that follows
 *   queues behind the unanswered statement for a second full bound. Cutting the socket at once fails it
 *   immediately; the server, when it answers again, sees the connection gone and rolls the transaction back.
 * - `atBegin` (settings for a pooled connection, see transactionSettings) follows every BEGIN in the same
 *   simple query: one round trip, and the settings live and die with the transaction, on whichever server
 *   connection the pooler gave it.
 */
function wrapQuery(conn: PgClient, atBegin: string | null, role: PoolRole): void {
  const query = conn.query.bind(conn);
  conn.madeAt = Date.now();
  conn.query = (...args: unknown[]) => {
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      const config = args[0] as { text?: unknown; values?: unknown[] } | null;
      const text = typeof config?.text === 'string' ? config.text : null;
      const withSettings = atBegin !== null && text !== null && !config!.values?.length && BEGIN.test(text);
      if (withSettings) args[0] = { ...config, text: `${text!.trim().replace(/;$/, '')}; ${atBegin}` };
      // Taken when the statement is sent: the answer (or the timeout) comes back in the connection's context.
      const unitOfWork = unitsOfWork.getStore();
      const commit = role.primary && text !== null && COMMIT.test(text);
      // The caller's id (a UUID, checked: it is written into the statement) goes out with their COMMIT.
      const telling = commit && role.writesChannel !== null && unitOfWork?.userId != null && UUID.test(unitOfWork.userId);
      // A transactional logical message, decoded by every instance at this commit; it takes no lock (a NOTIFY would
      // make every caller's commit wait for the cluster's notification queue lock: issue 32).
      if (telling) args[0] = { ...config, text: `SELECT pg_logical_emit_message(true, '${role.writesChannel}', '${unitOfWork!.userId}'); ${text}` };
      args[args.length - 1] = (err: Error | null, result: unknown) => {
        if (err && unitOfWork) unitOfWork.failure = err;
        const code = (err as { code?: string } | null)?.code;
        if (code && SERVER_CHANGED.has(code)) {
          conn.serverGone = true;
          discardBefore.set(serverOf(conn), Date.now());
        }
        // The COMMIT went out and no answer will come: it may have been applied (docs/faults.md).
        if (err && commit && unitOfWork && !code) unitOfWork.commitUnknown = true;
        if (err?.message === READ_TIMEOUT) {
          conn.connection.stream.destroy();
          if (unitOfWork) unitOfWork.cut = true;
        }
        if (!err && unitOfWork && role.primary) {
          if (commit) {
            unitOfWork.wrote = true;
            if (!telling) unitOfWork.told = false;
          } else if (WRITE_COMMANDS.has((result as { command?: string } | null)?.command ?? '') && conn.getTransactionStatus() === 'I') {
            // A write outside any transaction, committed as it ran: nobody was told.
            unitOfWork.wrote = true;
            unitOfWork.told = false;
          }
        }
        // A BEGIN with its settings, a COMMIT with its notification, answer one result per statement; knex
        // expects its own statement's alone.
        const own = Array.isArray(result) ? (withSettings ? result[0] : telling ? result[result.length - 1] : result) : result;
        callback(err, own);
      };
    }
    return query(...args);
  };
}

/** The primary's request pool without replicas. */
export const PRIMARY: PoolRole = { primary: true, writesChannel: null };

/**
 * PostgreSQL's JIT compiles a statement when its estimated cost passes jit_above_cost; the leveling of 1,000
 * projects (estimated at ~1M rows through its outer joins) spent 5.4 s of its 8 s compiling, to run ~50 ms of
 * expressions. Our statements are short OLTP reads and bulk reads over a few 10k rows: JIT never pays.
 */
const NO_JIT = '-c jit=off';

/**
 * Timestamps in UTC: rows' timestamptz text is then the one form an answer rewrites with a few string operations
 * (src/platform/values/time.ts, Instant). Only a speed: any other zone (through a pooler, outside a transaction, the
 * server's default) is parsed and gives the same answer. No statement of ours depends on the session's zone.
 */
const UTC = '-c TimeZone=UTC';

/**
 * Where the request pool's server settings go (docs/faults.md, "Through a connection pooler"):
 *
 * - `startup`: PostgreSQL itself keeps each connection's session, so the settings travel in the startup packet
 *   and hold for every statement of the connection, in a transaction or not.
 * - `transaction`: a transaction pooler (PgBouncer in `pool_mode = transaction`) hands the server connection to
 *   other clients between transactions, and refuses (or, with `ignore_startup_parameters`, drops) startup
 *   parameters. The settings then follow every BEGIN as `SET LOCAL`; a statement outside a transaction runs
 *   with the server's defaults for the role and database, which the operator sets once (README, "Scale out"),
 *   and always within the client's read bound.
 */
export type SessionSettings = 'startup' | 'transaction';

/** The server settings of the request pool, as PostgreSQL names them (milliseconds for the timeouts). */
export function serverSettings(limits: DatabaseLimits): Record<string, string> {
  return {
    statement_timeout: String(limits.statementTimeoutMs),
    lock_timeout: String(limits.lockTimeoutMs),
    idle_in_transaction_session_timeout: String(limits.idleInTransactionTimeoutMs),
    jit: 'off',
  };
}

/**
 * The settings as node-postgres sends them in the startup packet: the request pool's connection options, and what
 * the start's probe offers (src/platform/database/session-settings.ts), so that the probe tries exactly what the pool will send.
 */
export function startupParameters(limits: DatabaseLimits): Record<string, unknown> {
  return {
    statement_timeout: limits.statementTimeoutMs,
    lock_timeout: limits.lockTimeoutMs,
    idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    options: `${NO_JIT} ${UTC}`,
  };
}

/** `SET LOCAL` statements of the settings, sent after every BEGIN through a transaction pooler. */
function transactionSettings(settings: Record<string, string>): string {
  return Object.entries(settings).map(([name, value]) => `SET LOCAL ${name} = ${/^\d+$/.test(value) ? value : `'${value}'`}`).join('; ');
}

/**
 * Pool bounds and server settings of the request pool (docs/faults.md). Without limits (CLI, migrations)
 * statements may run as long as they need.
 */
export function poolOptions(limits?: DatabaseLimits, sessionSettings: SessionSettings = 'startup', role: PoolRole = PRIMARY): { pool: PoolConfig; connection: Record<string, unknown> } {
  if (!limits) {
    // No startup parameter: migrations and maintenance may reach the database through a pooler (their own
    // settings, src/platform/database/migrate.ts, are SET LOCAL).
    return {
      pool: { min: 0, max: 10, acquireTimeoutMillis: 5000, validate: reusableConnection } as PoolConfig,
      connection: { connectionTimeoutMillis: 3000 },
    };
  }
  const atBegin = sessionSettings === 'transaction' ? transactionSettings(serverSettings(limits)) : null;
  return {
    pool: {
      min: 0,
      max: limits.poolSize,
      acquireTimeoutMillis: limits.acquireTimeoutMs,
      createTimeoutMillis: limits.connectTimeoutMs + CLIENT_GRACE_MS,
      validate: reusableConnection,
      afterCreate: (conn: PgClient, done: (err: Error | null, conn: PgClient) => void) => {
        wrapQuery(conn, atBegin, role);
        done(null, conn);
      },
    } as PoolConfig,
    connection: {
      connectionTimeoutMillis: limits.connectTimeoutMs,
      query_timeout: limits.statementTimeoutMs + CLIENT_GRACE_MS,
      // In the startup packet: every pooled connection has them from its first statement on.
      ...(sessionSettings === 'startup' ? startupParameters(limits) : {}),
    },
  };
}
