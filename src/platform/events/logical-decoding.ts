import { createHash } from 'node:crypto';
import { Client as PgClient, type ClientConfig } from 'pg';
import { describeError } from '../database/describe';

// Logical decoding as the decoder uses it (src/platform/events/decoding-session.ts): the position it reports, the
// start's check that the server can decode, the slot's default name, and what to tell an operator.

/**
 * The name the server shows for the decoder's replication connections (pg_stat_activity, pg_stat_replication); with a
 * bus, followed by a hash of the bus's keys (decoderName), so that a decoder only ever ends a WAL sender of its own bus.
 */
const DECODER_APPLICATION_NAME = 'tender-bff change decoder';

/** The decoder's `application_name`: with a bus, whose stream `busKey` names, that bus's own. */
export function decoderName(busKey: string | null): string {
  return busKey === null ? DECODER_APPLICATION_NAME : `${DECODER_APPLICATION_NAME} ${createHash('sha256').update(busKey).digest('hex').slice(0, 8)}`;
}

/** What an operator should do about a replication connection refused for a reason that waiting does not fix. */
export function remedyOf(err: unknown): string | undefined {
  const message = describeError(err);
  if (/unsupported startup parameter: replication/.test(message)) return 'DATABASE_DIRECT_URL reaches a connection pooler, which does not carry replication connections: it must reach PostgreSQL itself';
  if (/pg_hba\.conf.*replication|replication connection/i.test(message)) return 'the server refuses replication connections to this database: allow them in pg_hba.conf';
  if (/must be superuser or replication role|permission denied to start WAL sender|REPLICATION attribute/i.test(message)) return 'the role of DATABASE_DIRECT_URL needs the REPLICATION attribute';
  if (/max_wal_senders|replication slots are in use|max_replication_slots/i.test(message)) return 'raise max_wal_senders and max_replication_slots, or set CHANGE_BUS_URL: without a bus each instance holds one of each, with it the whole fleet holds one';
  return undefined;
}

/**
 * The position just before `lsn`. pg-logical-replication reports a position one past the one it is given; a server
 * that shuts down waits for a report of exactly the end of the WAL it sent (WalSndDone compares for equality), so a
 * keepalive is answered with its own position, given to the library one before.
 */
export function lsnBefore(lsn: string): string {
  const [high, low] = lsn.split('/').map((part) => BigInt(`0x${part}`));
  const value = ((high << 32n) | low) - 1n;
  if (value < 0n) return '0/0';
  return `${(value >> 32n).toString(16).toUpperCase()}/${(value & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** An LSN as `XXXXXXXX/XXXXXXXX` (both halves eight upper-case hex digits), whose text order is WAL order. */
export function normalLsn(lsn: string): string {
  const [high, low] = lsn.split('/');
  return `${high.padStart(8, '0')}/${low.padStart(8, '0')}`.toUpperCase();
}

/** The publication the decoder names (Migration20270315000000_change_messages): no table, messages only. */
export const CHANGE_PUBLICATION = 'tender_changes';

/** The server and database change capture decodes, as the start found them. */
export interface DecodedDatabase {
  /** The cluster's system identifier: the same on its physical standbys, so a failover keeps the bus's stream. */
  systemId: string;
  database: string;
}

/**
 * What the server `url` reaches (DATABASE_DIRECT_URL) is, or why change capture cannot work there, in one line for the
 * start's refusal.
 */
export async function decodedDatabase(url: string, connectTimeoutMs: number): Promise<DecodedDatabase | string> {
  const client = new PgClient({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, query_timeout: connectTimeoutMs });
  client.on('error', () => undefined); // a failure is the rejection below, not a crash
  let row: Record<string, string>;
  try {
    await client.connect();
    [row] = (await client.query<Record<string, string>>(`select current_setting('wal_level') as wal_level,
    (select rolreplication or rolsuper from pg_roles where rolname = current_user)::text as replication,
    (select count(*) from pg_publication where pubname = '${CHANGE_PUBLICATION}')::text as publication,
    (select system_identifier::text from pg_control_system()) as system_id, current_database() as database`)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
  if (row.wal_level !== 'logical') {
    return `change capture needs wal_level = logical on the server DATABASE_DIRECT_URL reaches (it is ${row.wal_level}): set it and restart PostgreSQL (managed services: RDS/Aurora rds.logical_replication = 1, Cloud SQL cloudsql.logical_decoding = on, Azure wal_level = logical); README, "Scale out"`;
  }
  if (row.replication !== 'true') return 'change capture needs the REPLICATION attribute for the role of DATABASE_DIRECT_URL (ALTER ROLE ... WITH REPLICATION; RDS: GRANT rds_replication TO ...); README, "Scale out"';
  if (row.publication === '0') return `change capture needs the publication ${CHANGE_PUBLICATION}, made by the migrations: run them (npm run db:migrate)`;
  const refused = await replicationRefused(url, connectTimeoutMs);
  if (refused) return refused;
  return { systemId: row.system_id, database: row.database };
}

/**
 * Why the server refuses a replication connection from `url` for a reason that waiting does not fix (a pooler, pg_hba),
 * in one line; null when it accepts one, or refuses it for a passing reason (its WAL senders all taken for a moment,
 * the network). Such an instance could never decode: with a bus, elected, it would hold the fleet's decoding back at
 * each of its turns.
 */
async function replicationRefused(url: string, connectTimeoutMs: number): Promise<string | null> {
  // `replication` is a startup parameter node-postgres passes on, though its types do not name it.
  const client = new PgClient({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, replication: 'database' } as ClientConfig);
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('IDENTIFY_SYSTEM');
    return null;
  } catch (err) {
    const remedy = remedyOf(err);
    if (!remedy || /max_wal_senders/.test(remedy)) return null;
    return `change capture cannot open a replication connection on DATABASE_DIRECT_URL (${describeError(err)}): ${remedy}; README, "Scale out"`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The permanent slot's default name: `tender_`, the database's name as a slot name may spell it, and a hash of the
 * exact name, since slots are named per server and two databases of one server must not share one.
 */
export function defaultSlotName(database: string): string {
  const readable = database.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 40);
  return `tender_${readable}_${createHash('sha256').update(database).digest('hex').slice(0, 8)}`;
}
