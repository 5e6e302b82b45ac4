import { Client, Pool, type QueryResult, type QueryResultRow } from 'pg';
import type { DatabaseLimits } from '../config';

// The service's small pools beside the request pool: probes (readiness, the primary's watch, heartbeats) and
// background work (the webhook delivery loop), and a login check through a pooler.

/**
 * The probe pool: readiness's `select 1`, the primary's watch and the change listener's heartbeats, through the
 * request path but never queued behind requests waiting for the request pool. No startup parameters (a pooler may
 * refuse them): the client's bound is the one that matters for a probe.
 */
export class ProbePool {
  private pool: Pool;

  constructor(private readonly url: string, private readonly timeoutMs: number, private readonly max = 2) {
    this.pool = this.open();
  }

  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>> {
    return this.pool.query<R>(text, values);
  }

  /**
   * Gives up the connections made so far; the next probe connects anew. An idle probe connection to a primary that
   * was fenced (read-only, its connections kept) would otherwise keep asking, and heartbeating to, the old server
   * after the address moved to the new one (issue 33).
   */
  renew(): void {
    const old = this.pool;
    this.pool = this.open();
    // Waits for probes running on it; they answer whatever their server says.
    void old.end().catch(() => undefined);
  }

  end(): Promise<void> {
    return this.pool.end();
  }

  private open(): Pool {
    const pool = new Pool({
      connectionString: this.url,
      max: this.max,
      connectionTimeoutMillis: this.timeoutMs,
      query_timeout: this.timeoutMs,
      idleTimeoutMillis: 60000,
      allowExitOnIdle: true,
      application_name: 'tender-bff probes',
    });
    // A connection dropped while idle (database restarted) is discarded by the pool; nothing to do here.
    pool.on('error', () => undefined);
    return pool;
  }
}

export function probePool(url: string, timeoutMs: number, max = 2): ProbePool {
  return new ProbePool(url, timeoutMs, max);
}

/**
 * A small pool for background work (the webhook delivery loop): apart from the request pool, so that it never takes
 * a request's connection, with the request pool's bounds on connecting and on each statement (client-side).
 */
export function backgroundPool(url: string, limits: Pick<DatabaseLimits, 'connectTimeoutMs' | 'statementTimeoutMs'>, name: string, max = 3): Pool {
  const pool = new Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    query_timeout: limits.statementTimeoutMs,
    idleTimeoutMillis: 60000,
    allowExitOnIdle: true,
    application_name: `tender-bff ${name}`,
  });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Whether `url` accepts a login within `timeoutMs` (a connection opened and closed, no statement): what readiness
 * asks of a transaction pooler, which logs a client in without taking one of its shared server connections.
 */
export async function acceptsLogin(url: string, timeoutMs: number): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, application_name: 'tender-bff probes' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
}
