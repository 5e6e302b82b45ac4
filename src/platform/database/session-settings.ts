import { Client } from 'pg';
import type { Logger } from 'pino';
import type { DatabaseLimits } from '../config';
import { serverSettings, startupParameters, type SessionSettings } from './limits';
import { describeDatabase } from './describe';

// How the request pool's server settings reach a server: as startup parameters, or, through a pooler that refuses
// them, after each BEGIN (README, "Scale out").

/**
 * Where the request pool's server settings can go on `url` (src/platform/database/limits.ts): a connection that takes
 * them in its startup packet and applies them from there (`pg_settings.source` = `client`) is PostgreSQL's own
 * session; a pooler refuses them (PgBouncer: "unsupported startup parameter") or drops them
 * (`ignore_startup_parameters`), and then they go after each BEGIN. Offered exactly as the pool will send them, and
 * read back rather than assumed: whatever sits in front of the database, the bounds hold.
 */
export async function probeSessionSettings(url: string, limits: DatabaseLimits): Promise<SessionSettings> {
  const wanted = serverSettings(limits);
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    query_timeout: limits.connectTimeoutMs,
    ...startupParameters(limits),
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    if (/unsupported startup parameter/i.test((err as Error).message)) return 'transaction';
    throw err;
  }
  try {
    const { rows } = await client.query<{ name: string; setting: string; source: string }>(
      'select name, setting, source from pg_settings where name = any($1)', [Object.keys(wanted)]);
    const applied = new Map(rows.map((r) => [r.name, r]));
    return Object.entries(wanted).every(([name, value]) => applied.get(name)?.setting === value && applied.get(name)?.source === 'client')
      ? 'startup' : 'transaction';
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Through a transaction pooler, a statement outside a transaction runs with the server's defaults for the role
 * and database. The bounds of `limits` that those defaults leave looser (0 is no bound), each as the
 * statement that sets it once (README, "Scale out"); empty when they hold.
 */
async function looseServerDefaults(url: string, limits: DatabaseLimits): Promise<string[]> {
  const wanted = serverSettings(limits);
  const client = new Client({ connectionString: url, connectionTimeoutMillis: limits.connectTimeoutMs, query_timeout: limits.connectTimeoutMs });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; setting: string; role: string; database: string }>(
      `select name, setting, quote_ident(current_user) as role, quote_ident(current_database()) as database
       from pg_settings where name = any($1)`, [Object.keys(wanted)]);
    return rows
      .filter(({ name, setting }) => (name === 'jit' ? setting !== 'off' : setting === '0' || Number(setting) > Number(wanted[name])))
      .map(({ name, role, database }) => `ALTER ROLE ${role} IN DATABASE ${database} SET ${name} = ${wanted[name]}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * probeSessionSettings, said in the log: through a pooler, one line saying so, and a warning naming the server
 * defaults that leave statements outside a transaction looser than the configured bounds.
 */
export async function findSessionSettings(url: string, limits: DatabaseLimits, log?: Logger): Promise<SessionSettings> {
  const sessionSettings = await probeSessionSettings(url, limits);
  if (sessionSettings === 'startup') return sessionSettings;
  log?.info({ database: describeDatabase(url) }, 'database: a connection pooler refuses or drops startup parameters: the server settings follow each BEGIN');
  const loose = await looseServerDefaults(url, limits);
  if (loose.length) {
    log?.warn({ database: describeDatabase(url), loose },
      `database: through this pooler, statements outside a transaction run with server defaults looser than the configured bounds, and only the client's read bound holds for them; set them once (README, "Scale out"): ${loose.join('; ')}`);
  }
  return sessionSettings;
}
