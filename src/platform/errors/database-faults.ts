import { commitOutcomeUnknownHere, connectionCutHere, lastFailureHere } from '../database/limits';
import { AppError, ServiceUnavailableError } from './errors';

// Which failures of PostgreSQL, PgBouncer and the drivers mean "the database cannot serve now" (a 503 with
// Retry-After, never a 500), and the typed error each becomes; the typed errors themselves are in errors.ts.

/**
 * SQLSTATEs and socket errors meaning the database cannot serve right now, by what the caller is told.
 * `busy`: it answers but a bound ran out (statement_timeout or a cancel: 57014; lock_timeout: 55P03; a
 * transaction killed by idle_in_transaction_session_timeout: 25P03; too many connections: 53300, 53400).
 * `down`: it cannot be reached or is stopping (connection exceptions 08xxx, shutdown 57P01-57P03, sockets).
 * PgBouncer reports its own failures as 08P01 too (PGBOUNCER_FAULTS); PostgreSQL's own 08P01 is a protocol error
 * of the client (a bind of the wrong number of parameters), a bug: 500.
 */
const BUSY_CODES = new Set(['57014', '55P03', '25P03', '53300', '53400']);
const READ_ONLY_CODES = new Set(['25006']);
const DOWN_CODES = new Set([
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
]);
/** The pool's acquire timeout (knex's KnexTimeoutError, also when MikroORM wraps it). */
const BUSY_MESSAGES = /^Knex: Timeout acquiring a connection/;
/** node-postgres's own wording for a socket closed, a connect timeout, or a server that stopped answering. */
const DOWN_MESSAGES = /Connection terminated|timeout expired|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable/i;
/**
 * knex's refusal of a statement sent on a transaction it already ended. A fault only when the request gave the
 * transaction's connection up on a read timeout (a BEGIN the server never answered: the write then finds its
 * transaction gone), or when an earlier statement of the request failed for a fault (the connection lost, even
 * under a BEGIN: src/platform/database/limits.ts); otherwise a transaction used after its end, a bug: 500.
 */
const TRANSACTION_ENDED = /^Transaction query already complete/;

/**
 * PgBouncer's own refusals (SQLSTATE 08P01), by what they mean for the caller: no server connection free within
 * query_wait_timeout or too many clients (busy); a server it cannot reach, log into, or that crashed, its own bounds
 * ending a client, a shutdown (down). Its configuration errors (no such database, unsupported startup parameter)
 * are not here: waiting would not fix them.
 */
const PGBOUNCER_FAULTS: Array<[RegExp, DatabaseFault]> = [
  [/query_wait_timeout|no more connections allowed|too many servers/, 'busy'],
  [/server login has been failing|server conn crashed|cannot connect to server|client_login_timeout|query timeout|idle transaction timeout|server shutting down|pooler is shutting down|database .* (paused|disabled)/i, 'down'],
];

export type DatabaseFault = 'busy' | 'down' | 'read-only';

/** Whether the request's last failed statement, before `ended`, was a database fault. */
function endedByFault(ended: unknown): boolean {
  const failure = lastFailureHere();
  return failure !== null && failure !== ended && databaseFault(failure) !== null;
}

/** Whether an error means the database cannot serve now (answered 503, not 500), and why; null otherwise. */
export function databaseFault(err: unknown): DatabaseFault | null {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && BUSY_CODES.has(code)) return 'busy';
    if (typeof code === 'string' && READ_ONLY_CODES.has(code)) return 'read-only';
    if (typeof code === 'string' && DOWN_CODES.has(code)) return 'down';
    const msg = (e as { message?: unknown }).message;
    if (code === '08P01' && typeof msg === 'string') {
      const fault = PGBOUNCER_FAULTS.find(([pattern]) => pattern.test(msg));
      if (fault) return fault[1];
    }
    if (typeof msg === 'string' && BUSY_MESSAGES.test(msg)) return 'busy';
    if (typeof msg === 'string' && DOWN_MESSAGES.test(msg)) return 'down';
    if (typeof msg === 'string' && TRANSACTION_ENDED.test(msg) && (connectionCutHere() || endedByFault(e))) return 'down';
    e = (e as { cause?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return null;
}

/** Whether an error means the database cannot serve now (a 503). */
export function isDatabaseUnavailable(err: unknown): boolean {
  return databaseFault(err) !== null;
}

const FAULT_MESSAGES: Record<DatabaseFault, string> = {
  busy: 'The database is busy, try again shortly',
  down: 'The database is unavailable, try again shortly',
  'read-only': 'The database takes no writes right now (its primary is changing), try again shortly',
};

/**
 * When the connection was lost with a COMMIT under way, the write may have been saved: the caller is told so, and how
 * to find out (an Idempotency-Key replays what was saved; docs/faults.md, "Failover").
 */
const COMMIT_UNKNOWN = 'The database connection was lost while the write was committing: it may have been saved. Send it again with the same Idempotency-Key to get its answer without writing it twice';

/** Turns any thrown value into an AppError, or null when it is unexpected (a 500). */
export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const fault = databaseFault(err);
  if (fault) return new ServiceUnavailableError(fault === 'down' && commitOutcomeUnknownHere() ? COMMIT_UNKNOWN : FAULT_MESSAGES[fault], { cause: err });
  return null;
}
