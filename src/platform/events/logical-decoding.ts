import { Client as PgClient, type Client } from 'pg';
import { PgoutputPlugin } from 'pg-logical-replication';

// Logical decoding as the change listener uses it (src/platform/events/change-listener.ts): its plugin over a temporary
// slot, the position it reports, the start's check that the server can decode, and what to tell an operator.

export const describeError = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0] : String(err));

/** What an operator should do about a replication connection refused for a reason that waiting does not fix. */
export function remedyOf(err: unknown): string | undefined {
  const message = describeError(err);
  if (/unsupported startup parameter: replication/.test(message)) return 'DATABASE_DIRECT_URL reaches a connection pooler, which does not carry replication connections: it must reach PostgreSQL itself';
  if (/pg_hba\.conf.*replication|replication connection/i.test(message)) return 'the server refuses replication connections to this database: allow them in pg_hba.conf';
  if (/must be superuser or replication role|permission denied to start WAL sender|REPLICATION attribute/i.test(message)) return 'the role of DATABASE_DIRECT_URL needs the REPLICATION attribute';
  if (/max_wal_senders|replication slots are in use|max_replication_slots/i.test(message)) return 'raise max_wal_senders and max_replication_slots: each instance holds one of each';
  return undefined;
}

/**
 * pgoutput over a TEMPORARY slot made on the replication connection itself, just before START_REPLICATION: a
 * temporary slot belongs to the session that made it and is dropped with it (pg-logical-replication's plugin only
 * starts from an existing slot). Making it waits for the transactions then running to end (PostgreSQL needs a
 * consistent point): bounded by `timeoutMs`, after which the connection is given up and tried again.
 */
export class TemporarySlotPgoutput extends PgoutputPlugin {
  constructor(private readonly timeoutMs: number) {
    super({ protoVersion: 1, publicationNames: [CHANGE_PUBLICATION], messages: true });
  }

  override async start(client: Client, slotName: string, lastLsn: string): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`the temporary replication slot was not made within ${this.timeoutMs} ms: a transaction open since before is holding it (logical decoding waits for the transactions running when a slot is made)`));
        void client.end().catch(() => undefined);
      }, this.timeoutMs);
    });
    try {
      await Promise.race([client.query(`CREATE_REPLICATION_SLOT "${slotName}" TEMPORARY LOGICAL pgoutput`), bound]);
    } finally {
      clearTimeout(timer);
    }
    return super.start(client, slotName, lastLsn);
  }
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

/** The publication the decoder names (Migration20270315000000_change_messages): no table, messages only. */
const CHANGE_PUBLICATION = 'tender_changes';

/**
 * Why change capture cannot work on the server `url` reaches (DATABASE_DIRECT_URL), in one line for the start's
 * refusal; null when it can.
 */
export async function changeCaptureUnavailable(url: string, connectTimeoutMs: number): Promise<string | null> {
  const client = new PgClient({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, query_timeout: connectTimeoutMs });
  let row: Record<string, string>;
  try {
    await client.connect();
    [row] = (await client.query<Record<string, string>>(`select current_setting('wal_level') as wal_level,
    (select rolreplication or rolsuper from pg_roles where rolname = current_user)::text as replication,
    (select count(*) from pg_publication where pubname = '${CHANGE_PUBLICATION}')::text as publication`)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
  if (row.wal_level !== 'logical') {
    return `change capture needs wal_level = logical on the server DATABASE_DIRECT_URL reaches (it is ${row.wal_level}): set it and restart PostgreSQL (managed services: RDS/Aurora rds.logical_replication = 1, Cloud SQL cloudsql.logical_decoding = on, Azure wal_level = logical); README, "Scale out"`;
  }
  if (row.replication !== 'true') return 'change capture needs the REPLICATION attribute for the role of DATABASE_DIRECT_URL (ALTER ROLE ... WITH REPLICATION; RDS: GRANT rds_replication TO ...); README, "Scale out"';
  if (row.publication === '0') return `change capture needs the publication ${CHANGE_PUBLICATION}, made by the migrations: run them (npm run db:migrate)`;
  return null;
}
