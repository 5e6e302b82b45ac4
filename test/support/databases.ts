import { Client } from 'pg';
import { adminQuery, dropDatabase, withDatabase } from '../../src/platform/database/admin';

export { adminQuery, dropDatabase };

/** Prefix of every database a test run creates: `tt_<epoch seconds>_<pid>_`. */
export const RUN_DB_PREFIX = 'tt_';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Copies the run's migrated and seeded template database; a copy takes a fraction of a second. */
export async function createDatabaseFrom(serverUrl: string, template: string, name: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(serverUrl, `create database ${quote(name)} template ${quote(template)}`);
      return withDatabase(serverUrl, name);
    } catch (err) {
      // 55006: the template is briefly in use by another copy; wait and retry.
      if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}

/** Drops databases of earlier runs that were killed before their teardown (older than two hours). */
export async function sweepOldRunDatabases(serverUrl: string): Promise<void> {
  const rows = await adminQuery<{ datname: string }>(serverUrl, `select datname from pg_database where datname like 'tt\\_%'`);
  const cutoff = Date.now() / 1000 - 2 * 3600;
  for (const { datname } of rows) {
    const started = Number(datname.split('_')[1]);
    if (Number.isFinite(started) && started < cutoff) await dropDatabase(serverUrl, datname);
  }
}

/** One statement on a database of its own connection, outside any app's pool (what another client would see). */
export async function queryRows<T = Record<string, unknown>>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
