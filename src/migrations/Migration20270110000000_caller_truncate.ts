import { Migration } from '@mikro-orm/migrations';

/**
 * A TRUNCATE of a table that holds users' rights notifies every instance too (`*` on `tender_callers`, every
 * user): the row triggers of Migration20270105000000_caller_changes do not fire on TRUNCATE, and the callers
 * kept before it (src/platform/auth/caller-cache.ts) would stay until they expire. Statement-level: a TRUNCATE
 * has no rows to name.
 *
 * The channel is written out rather than imported (CALLER_CHANNEL, src/platform/events/change-event.ts): a migration
 * that has run must keep meaning what it did. Names start with `caller_truncate_`.
 */

const CHANNEL = 'tender_callers';
const TABLES = ['app_user', 'membership', 'headquarter_admin', 'organization'];

export class Migration20270110000000_caller_truncate extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function "caller_truncate"() returns trigger language plpgsql as $$
begin
  perform pg_notify('${CHANNEL}', '*');
  return null;
end $$;`);
    for (const table of TABLES) {
      this.addSql(`create trigger "caller_truncate_${table}" after truncate on "${table}"
  for each statement execute function "caller_truncate"();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of TABLES) this.addSql(`drop trigger if exists "caller_truncate_${table}" on "${table}";`);
    this.addSql(`drop function if exists "caller_truncate"();`);
  }
}
