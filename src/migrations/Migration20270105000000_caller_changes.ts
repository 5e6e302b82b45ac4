import { Migration } from '@mikro-orm/migrations';

/**
 * Authorization changes for the instances' caller caches (src/platform/auth/caller-cache.ts, docs/caching.md): every
 * write that can change what a user may do through the API (their account's API flags and current organization,
 * their memberships and roles, their headquarters) sends a NOTIFY on `tender_callers` with the user's id; a
 * write to an organization (its kind, its API activation, its name, which orders a user's organizations) sends
 * `*`, every user. Whoever writes (this service, the main application, psql), on commit; nothing on rollback;
 * identical payloads of one transaction are delivered once.
 *
 * Row-level triggers: these tables change rarely and by a few rows; names start with `caller_change_`.
 */

const CHANNEL = 'tender_callers';

/** Per table: the events and the payload of a row (`r` is the new row, or the old one of a delete). */
const TABLES: Record<string, { events: string; payload: string }> = {
  app_user: { events: 'update or delete', payload: 'r.id::text' },
  membership: { events: 'insert or update or delete', payload: 'r.user_id::text' },
  headquarter_admin: { events: 'insert or update or delete', payload: 'r.user_id::text' },
  organization: { events: 'update or delete', payload: `'*'` },
};

export class Migration20270105000000_caller_changes extends Migration {
  override async up(): Promise<void> {
    for (const [table, { events, payload }] of Object.entries(TABLES)) {
      this.addSql(`create function "caller_change_${table}"() returns trigger language plpgsql as $$
declare r record;
begin
  if tg_op = 'DELETE' then r := old; else r := new; end if;
  perform pg_notify('${CHANNEL}', ${payload});
  -- A membership or headquarter moved to another user changes the old user's rights too.
  if tg_op = 'UPDATE' and tg_table_name in ('membership', 'headquarter_admin') then
    perform pg_notify('${CHANNEL}', old.user_id::text);
  end if;
  return null;
end $$;`);
      this.addSql(`create trigger "caller_change_${table}" after ${events} on "${table}"
  for each row execute function "caller_change_${table}"();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of Object.keys(TABLES)) {
      this.addSql(`drop trigger if exists "caller_change_${table}" on "${table}";`);
      this.addSql(`drop function if exists "caller_change_${table}"();`);
    }
  }
}
