import { AsyncLocalStorage } from 'node:async_hooks';
import type { PoolConfig } from '@mikro-orm/core';
import type { DatabaseLimits } from './config';

/**
 * How much longer than `statement_timeout` the client waits for an answer before it gives up on the server
 * (a frozen host, a lost network): the server's own timeout normally fires first.
 */
export const CLIENT_GRACE_MS = 1000;

/** node-postgres's wording when its `query_timeout` ran out. */
const READ_TIMEOUT = 'Query read timeout';

/**
 * Whether the unit of work under way (an HTTP request) had a connection given up on a read timeout. Its
 * transaction then ended under it, and knex refuses the statements that follow with 'Transaction query already
 * complete': a database fault only then (src/errors.ts); anywhere else the same words are a programming error.
 */
const connectionCuts = new AsyncLocalStorage<{ cut: boolean }>();

/** Runs `fn` as one unit of work whose given-up connections connectionCutHere() reports. */
export function watchingConnectionCuts<T>(fn: () => T): T {
  return connectionCuts.run({ cut: false }, fn);
}

/** Whether a connection of the current unit of work was given up on a read timeout. */
export const connectionCutHere = (): boolean => connectionCuts.getStore()?.cut === true;

/** The parts of a node-postgres client the pool hooks below use. */
interface PgClient {
  readyForQuery: boolean;
  getTransactionStatus(): string | null;
  query: (...args: unknown[]) => unknown;
  connection: { stream: { destroy(): void } };
}

/**
 * A connection goes back into service only when idle outside any transaction. One whose statement the
 * client gave up on (still running, or a BEGIN answered late) is destroyed instead: anything sent on it
 * later could run inside that abandoned transaction, and a refused write could commit with it.
 */
export const reusableConnection = (conn: PgClient): boolean => conn.readyForQuery && conn.getTransactionStatus() === 'I';

/**
 * When node-postgres gives up waiting for a statement it keeps the connection, and the ROLLBACK that follows
 * queues behind the unanswered statement for a second full bound. Cutting the socket at once fails it
 * immediately; the server, when it answers again, sees the connection gone and rolls the transaction back.
 * knex calls `query(config, callback)`, the one form wrapped here.
 */
function cutOnReadTimeout(conn: PgClient): void {
  const query = conn.query.bind(conn);
  conn.query = (...args: unknown[]) => {
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      // Taken when the statement is sent: the answer (or the timeout) comes back in the connection's context.
      const unitOfWork = connectionCuts.getStore();
      args[args.length - 1] = (err: Error | null, result: unknown) => {
        if (err?.message === READ_TIMEOUT) {
          conn.connection.stream.destroy();
          if (unitOfWork) unitOfWork.cut = true;
        }
        callback(err, result);
      };
    }
    return query(...args);
  };
}

/**
 * PostgreSQL's JIT compiles a statement when its estimated cost passes jit_above_cost; the leveling of 1,000
 * projects (estimated at ~1M rows through its outer joins) spent 5.4 s of its 8 s compiling, to run ~50 ms of
 * expressions. Our statements are short OLTP reads and bulk reads over a few 10k rows: JIT never pays.
 */
const NO_JIT = '-c jit=off';

/**
 * Pool bounds and per-connection session settings of the request pool (docs/faults.md). Without limits
 * (CLI, migrations) statements may run as long as they need.
 */
export function poolOptions(limits?: DatabaseLimits): { pool: PoolConfig; connection: Record<string, unknown> } {
  if (!limits) {
    return {
      pool: { min: 0, max: 10, acquireTimeoutMillis: 5000, validate: reusableConnection } as PoolConfig,
      connection: { connectionTimeoutMillis: 3000, options: NO_JIT },
    };
  }
  return {
    pool: {
      min: 0,
      max: limits.poolSize,
      acquireTimeoutMillis: limits.acquireTimeoutMs,
      createTimeoutMillis: limits.connectTimeoutMs + CLIENT_GRACE_MS,
      validate: reusableConnection,
      afterCreate: (conn: PgClient, done: (err: Error | null, conn: PgClient) => void) => {
        cutOnReadTimeout(conn);
        done(null, conn);
      },
    } as PoolConfig,
    connection: {
      connectionTimeoutMillis: limits.connectTimeoutMs,
      // Sent in the startup packet: every pooled connection has them from its first statement on.
      statement_timeout: limits.statementTimeoutMs,
      lock_timeout: limits.lockTimeoutMs,
      idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
      query_timeout: limits.statementTimeoutMs + CLIENT_GRACE_MS,
      options: NO_JIT,
    },
  };
}
