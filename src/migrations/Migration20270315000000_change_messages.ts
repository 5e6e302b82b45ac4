import { Migration } from '@mikro-orm/migrations';

/**
 * Change capture without NOTIFY (issue 32, docs/subscriptions.md): a transaction with a pending notification takes
 * the notification queue's lock, one for the whole cluster, at commit and holds it through the commit's flush
 * (PreCommit_Notify, src/backend/commands/async.c), so every writer whose triggers notified committed one after the
 * other. Every trigger function of the service that notified now writes a transactional logical message instead,
 * with the channel as its prefix and the same payload: `pg_logical_emit_message(true, channel, payload)` is a WAL
 * record, decoded at commit in commit order by each instance's logical decoding (src/platform/events/change-listener.ts),
 * dropped on rollback, and takes no lock. The functions' bodies are otherwise unchanged: each is rewritten from its
 * own definition (pg_get_functiondef), the call replaced, so that what they compute stays what the migrations that
 * made them say (change events, caller changes, the webhook outbox's wake-up).
 *
 * The publication `tender_changes` holds no table: the decoder asks pgoutput for messages only. Writing a message
 * needs no setting; decoding one needs `wal_level = logical` (the service checks it at start).
 */

/** The service's functions that notified, by name. */
const FUNCTIONS = `(p.proname like 'change\\_event\\_%' or p.proname like 'caller\\_change\\_%' or p.proname in ('caller_truncate', 'webhook_enqueue'))`;

const rewrite = (from: string, to: string) => `do $$
declare f record;
begin
  for f in select p.oid from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema() and ${FUNCTIONS} and p.prosrc like '%${from}%'
  loop
    execute replace(pg_get_functiondef(f.oid), '${from}', '${to}');
  end loop;
  if exists (select 1 from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema() and ${FUNCTIONS} and p.prosrc like '%${from}%') then
    raise exception 'a change capture function still calls ${from}';
  end if;
end $$;`;

export class Migration20270315000000_change_messages extends Migration {
  override async up(): Promise<void> {
    this.addSql(rewrite('pg_notify(', 'pg_logical_emit_message(true, '));
    this.addSql('create publication tender_changes;');
  }

  override async down(): Promise<void> {
    this.addSql('drop publication if exists tender_changes;');
    this.addSql(rewrite('pg_logical_emit_message(true, ', 'pg_notify('));
  }
}
