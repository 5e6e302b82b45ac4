/** The database's settings: its read replicas and the bounds of every wait on it (src/platform/config.ts composes them). */
import { POSTGRES, group, intVar, refuse, setting, urlProblem } from '../env';

/** Read replicas (README, "Scale out"). */
export function replicas(databaseUrl: string | null) {
  return group({
    /** Streaming replicas of DATABASE_URL's database; empty: everything on the primary. */
    urls: setting<string[]>('DATABASE_REPLICA_URLS', [], (raw, refused) => {
      const urls: string[] = [];
      for (const [i, entry] of raw.split(',').map((e) => e.trim()).filter((e) => e !== '').entries()) {
        const problem = urlProblem(entry, POSTGRES);
        if (problem) return refused(`entry ${i + 1} ${problem}`);
        urls.push(entry.replace(/\/+$/, ''));
      }
      if (urls.length && !databaseUrl) return refused('needs DATABASE_URL (the embedded database has no replica)');
      return new Set(urls).size === urls.length ? urls : refused('lists a replica twice');
    }),
    /** How often each instance reads the primary's WAL position and each replica's replay position. */
    pollMs: intVar('DATABASE_REPLICA_POLL_MS', 250, 10, 60000),
    /** A replica further behind the primary than this is skipped until it catches up. */
    maxLagMs: intVar('DATABASE_REPLICA_MAX_LAG_MS', 5000, 100, 3600000),
  }).transform((read, ctx) => (read.maxLagMs < 2 * read.pollMs
    // Lag is known to within a poll: a bound tighter than two polls could never be told from noise.
    ? refuse(ctx, `DATABASE_REPLICA_MAX_LAG_MS (${read.maxLagMs}) must be at least twice DATABASE_REPLICA_POLL_MS (${read.pollMs})`) : read));
}

/** Defaults and their reasons: docs/faults.md. Zero (PostgreSQL's "no limit") is refused on purpose. */
export function databaseLimits() {
  return group({
    /** Connections in the request pool. */
    poolSize: intVar('DATABASE_POOL_SIZE', 10, 1, 1000),
    /** Opening one connection (TCP, TLS, authentication). */
    connectTimeoutMs: intVar('DATABASE_CONNECT_TIMEOUT_MS', 3000, 50, 600000),
    /** Waiting for a free connection of the pool. */
    acquireTimeoutMs: intVar('DATABASE_ACQUIRE_TIMEOUT_MS', 3000, 50, 600000),
    /** One statement (PostgreSQL `statement_timeout`). */
    statementTimeoutMs: intVar('DATABASE_STATEMENT_TIMEOUT_MS', 5000, 50, 600000),
    /** Waiting for a row or table lock (`lock_timeout`). */
    lockTimeoutMs: intVar('DATABASE_LOCK_TIMEOUT_MS', 2000, 50, 600000),
    /** A transaction left open with nothing running (`idle_in_transaction_session_timeout`). */
    idleInTransactionTimeoutMs: intVar('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 10000, 50, 3600000),
    /** How long a start keeps retrying a database that does not answer. */
    startTimeoutMs: intVar('DATABASE_START_TIMEOUT_MS', 30000, 0, 3600000),
  }).transform((limits, ctx) => (limits.lockTimeoutMs > limits.statementTimeoutMs
    // A lock wait is one kind of statement wait: a longer lock_timeout would never fire.
    ? refuse(ctx, `DATABASE_LOCK_TIMEOUT_MS (${limits.lockTimeoutMs}) must not be greater than DATABASE_STATEMENT_TIMEOUT_MS (${limits.statementTimeoutMs})`)
    : limits));
}
