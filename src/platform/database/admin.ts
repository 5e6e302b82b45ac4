import { Client } from 'pg';
import { SESSION_NAME } from './orm-config';

// Databases as whole things: made, dropped, and their busy sessions ended (tests, benchmarks, the shutdown).

/** Replaces the database name of a server URL. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** One statement on the server's maintenance database (`postgres`), for creating and dropping databases. */
export async function adminQuery<T = unknown>(serverUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  client.on('error', () => undefined); // a failure is the rejection below, not a crash
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Drops a database (tests' and benchmarks' scratch ones), the replication slots on it included: WITH (FORCE) ends
 * its sessions but refuses a database a logical slot is on (55006), and an instance's temporary slot outlives its
 * stop by the moment its WAL sender takes to exit. Its WAL senders are ended, then the drop is retried.
 */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const quoted = `"${name.replace(/"/g, '""')}"`;
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(serverUrl, `drop database if exists ${quoted} with (force)`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
      await adminQuery(serverUrl, 'select pg_terminate_backend(active_pid) from pg_replication_slots where database = $1 and active_pid is not null', [name]);
      await adminQuery(serverUrl, 'select pg_drop_replication_slot(slot_name) from pg_replication_slots where database = $1 and not active', [name]).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Creates the database when missing. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const rows = await adminQuery(serverUrl, 'select 1 from pg_database where datname = $1', [database]);
  if (!rows.length) await adminQuery(serverUrl, `create database "${database.replace(/"/g, '""')}"`);
}

/**
 * Ends this process's work on the database: terminates its sessions (SESSION_NAME) that are not idle, a
 * statement running or waiting on a lock, or a transaction open. Their requests fail at once with a
 * connection error (answered 503) and their transactions roll back. The shutdown's last resort near its
 * bound (src/platform/shutdown.ts). Through a connection of its own, since the pool may be the thing that is stuck;
 * ending sessions of one's own role needs no privilege. Returns how many were ended.
 */
export async function endBusySessions(url: string): Promise<number> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000, query_timeout: 1000 });
  client.on('error', () => undefined); // a failure is the rejection below, not a crash
  try {
    await client.connect();
    const { rows } = await client.query<{ ended: boolean }>(
      `select pg_terminate_backend(pid) as ended from pg_stat_activity
       where application_name = $1 and datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`,
      [SESSION_NAME],
    );
    return rows.filter((r) => r.ended).length;
  } finally {
    await client.end().catch(() => undefined);
  }
}
