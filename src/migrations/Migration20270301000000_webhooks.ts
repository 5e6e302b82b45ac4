import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks (issue 26, docs/webhooks.md): endpoints per organization, and a transactional outbox filled by the
 * database itself.
 *
 * Every write that makes an event (an answer, a decline, an invitation, a template closed, a project archived...)
 * inserts, in its own transaction, one `webhook_event` row and one `webhook_delivery` row per enabled endpoint of the
 * organization that wants that type: whoever writes (this service, the contractor portal, psql), and nothing when the
 * transaction rolls back. A NOTIFY on `tender_webhooks` only wakes the instances' delivery loops at once; they also
 * poll, so a notification lost costs latency, never an event.
 *
 * Statement-level triggers over transition tables, as the change events (20261230): a statement writing 500 versions
 * runs one insert of events and one of deliveries. They are named `webhook_event_*`, after `*_statistics_*` in
 * PostgreSQL's alphabetical order, so that the template figures they copy are those of the same statement. When no
 * endpoint is enabled at all, the first statement of each function returns: writes pay one index probe.
 *
 * Unlike the derived data (20270205), these triggers keep PostgreSQL's default (`ENABLE`): a restore or a logical
 * replica's apply (`session_replication_role = replica`) does not replay old events to integrations.
 */

const CHANNEL = 'tender_webhooks';

/** Timestamps as REST writes them: UTC with six decimals (decisions.md, microseconds). */
const TIME = `create function webhook_time(t timestamptz) returns text language sql stable as $$
  select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;`;

/** A template's figures as the statistics keep them (template_statistics), in the payload's words. */
const TEMPLATE_STATS = `create function webhook_template_stats(id uuid) returns jsonb language sql stable as $$
  select jsonb_build_object('budget', s.budget, 'contractors', s.contractors, 'answers', s.answers, 'pending', s.pending,
    'declined', s.declined, 'in_revision', s.in_revision, 'may_answer', s.may_answer)
  from template_statistics s where s.template_id = id
$$;`;

/** The ids every contractor event carries, from a document `d`, its template `t` and project `p`. */
const DOCUMENT_IDS = `'project_id', p.id, 'template_id', t.id, 'main_template_id', coalesce(t.parent_id, t.id),
  'document_id', d.id, 'contractor_id', d.contractor_id, 'template_stats', webhook_template_stats(t.id)`;

/** The event of an ANSWERED or DECLINED version `c`: an answer carries the offer's figures. */
const VERSION_EVENT = `select p.organization_id, case c.status when 'ANSWERED' then 'contractor.answered' else 'contractor.declined' end,
        jsonb_build_object(${DOCUMENT_IDS}, 'version_id', c.id, 'version', c.version, 'sent_at', webhook_time(c.sent_at))
        || case when c.status = 'ANSWERED' then jsonb_build_object('sub_total', c.sub_total, 'discount', c.discount, 'amount', c.sub_total - c.discount) else '{}' end`;

const TEMPLATE_IDS = `'project_id', p.id, 'template_id', c.id, 'main_template_id', coalesce(c.parent_id, c.id),
  'parent_id', c.parent_id, 'is_slice', c.is_slice, 'slice_name', c.slice_name, 'trade_id', c.trade_id`;

/**
 * Per trigger: the table, the event, the transition tables, and the select of `(organization_id, type, data)`.
 * `changed` holds the rows after the statement (before it, for a delete); `previous`, before an update.
 */
const TRIGGERS: Array<{ table: string; event: 'insert' | 'update' | 'delete'; select: string }> = [
  {
    table: 'document_version', event: 'insert',
    select: `${VERSION_EVENT}
      from changed c join document d on d.id = c.document_id join template t on t.id = d.template_id join project p on p.id = t.project_id
      where c.status in ('ANSWERED', 'DECLINED')`,
  },
  {
    table: 'document_version', event: 'update',
    select: `${VERSION_EVENT}
      from changed c join previous o on o.id = c.id
      join document d on d.id = c.document_id join template t on t.id = d.template_id join project p on p.id = t.project_id
      where c.status in ('ANSWERED', 'DECLINED') and o.status is distinct from c.status`,
  },
  {
    table: 'document', event: 'insert',
    select: `select p.organization_id, 'contractor.invited', jsonb_build_object(${DOCUMENT_IDS})
      from changed d join template t on t.id = d.template_id join project p on p.id = t.project_id`,
  },
  {
    table: 'document', event: 'update',
    select: `select p.organization_id, 'contractor.intention_changed',
        jsonb_build_object(${DOCUMENT_IDS}, 'intention', d.intention, 'previous_intention', o.intention)
      from changed d join previous o on o.id = d.id join template t on t.id = d.template_id join project p on p.id = t.project_id
      where o.intention is distinct from d.intention
      union all
      select p.organization_id, 'contractor.downloaded', jsonb_build_object(${DOCUMENT_IDS}, 'downloaded_at', webhook_time(d.dce_downloaded_at))
      from changed d join previous o on o.id = d.id join template t on t.id = d.template_id join project p on p.id = t.project_id
      where o.dce_downloaded_at is null and d.dce_downloaded_at is not null`,
  },
  {
    table: 'template', event: 'insert',
    select: `select p.organization_id, 'template.created', jsonb_build_object(${TEMPLATE_IDS}, 'budget', c.budget)
      from changed c join project p on p.id = c.project_id`,
  },
  {
    table: 'template', event: 'update',
    select: `select p.organization_id, 'template.closed',
        jsonb_build_object(${TEMPLATE_IDS}, 'closed_at', webhook_time(c.closed_at), 'stats', webhook_template_stats(c.id))
      from changed c join previous o on o.id = c.id join project p on p.id = c.project_id
      where o.closed_at is null and c.closed_at is not null`,
  },
  {
    // A template deleted with its project (the project row already gone) is not reported: the project is.
    table: 'template', event: 'delete',
    select: `select p.organization_id, 'template.deleted', jsonb_build_object(${TEMPLATE_IDS})
      from changed c join project p on p.id = c.project_id`,
  },
  {
    table: 'project', event: 'update',
    select: `select c.organization_id, 'project.archived',
        jsonb_build_object('project_id', c.id, 'name', c.name, 'archived_at', webhook_time(c.archived_at))
      from changed c join previous o on o.id = c.id
      where o.archived_at is null and c.archived_at is not null`,
  },
];

const name = (t: { table: string; event: string }) => `webhook_event_${t.table}_${t.event}`;

export class Migration20270301000000_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhook_endpoint" (
      "id" uuid not null primary key,
      "organization_id" uuid not null references "organization" ("id") on delete cascade,
      "url" text not null,
      "description" text not null default '',
      "event_types" text[] not null,
      "secret" text not null,
      "previous_secret" text null,
      "previous_secret_expires_at" timestamptz null,
      "created_at" timestamptz not null default now(),
      "updated_at" timestamptz not null default now(),
      "disabled_at" timestamptz null,
      "disabled_reason" text null,
      "failing_since" timestamptz null);`);
    this.addSql(`create index "webhook_endpoint_organization_id_index" on "webhook_endpoint" ("organization_id");`);
    this.addSql(`create index "webhook_endpoint_enabled_index" on "webhook_endpoint" ("organization_id") where "disabled_at" is null;`);

    this.addSql(`create table "webhook_event" (
      "id" uuid not null default gen_random_uuid() primary key,
      "organization_id" uuid not null references "organization" ("id") on delete cascade,
      "type" text not null,
      "payload" jsonb not null,
      "created_at" timestamptz not null default clock_timestamp());`);
    this.addSql(`create index "webhook_event_created_at_index" on "webhook_event" ("created_at");`);
    this.addSql(`create index "webhook_event_organization_id_index" on "webhook_event" ("organization_id");`);

    this.addSql(`create table "webhook_delivery" (
      "id" uuid not null default gen_random_uuid() primary key,
      "event_id" uuid not null references "webhook_event" ("id") on delete cascade,
      "endpoint_id" uuid not null references "webhook_endpoint" ("id") on delete cascade,
      "status" text not null default 'pending' check ("status" in ('pending', 'succeeded', 'failed')),
      "attempts" integer not null default 0,
      "next_attempt_at" timestamptz not null default clock_timestamp(),
      "created_at" timestamptz not null default clock_timestamp(),
      "finished_at" timestamptz null,
      constraint "webhook_delivery_event_id_endpoint_id_unique" unique ("event_id", "endpoint_id"));`);
    this.addSql(`create index "webhook_delivery_due_index" on "webhook_delivery" ("next_attempt_at") where "status" = 'pending';`);
    this.addSql(`create index "webhook_delivery_endpoint_id_index" on "webhook_delivery" ("endpoint_id");`);

    this.addSql(`create table "webhook_attempt" (
      "id" uuid not null default gen_random_uuid() primary key,
      "delivery_id" uuid not null references "webhook_delivery" ("id") on delete cascade,
      "endpoint_id" uuid not null references "webhook_endpoint" ("id") on delete cascade,
      "event_id" uuid not null references "webhook_event" ("id") on delete cascade,
      "attempt" integer not null,
      "attempted_at" timestamptz not null,
      "duration_ms" integer not null,
      "outcome" text not null check ("outcome" in ('succeeded', 'failed', 'gone', 'timeout', 'unreachable', 'refused')),
      "response_status" integer null,
      "response_body" text null,
      "error" text null);`);
    this.addSql(`create index "webhook_attempt_endpoint_id_attempted_at_index" on "webhook_attempt" ("endpoint_id", "attempted_at" desc);`);
    this.addSql(`create index "webhook_attempt_delivery_id_index" on "webhook_attempt" ("delivery_id");`);
    this.addSql(`create index "webhook_attempt_event_id_index" on "webhook_attempt" ("event_id");`);

    this.addSql(TIME);
    this.addSql(TEMPLATE_STATS);
    // The outbox's one writer: events wanted by an enabled endpoint of their organization, and their deliveries.
    this.addSql(`create function webhook_enqueue(candidates jsonb) returns void language plpgsql as $$
declare
  at timestamptz := clock_timestamp();
  queued integer;
begin
  with c as (
    select (x->>'organization_id')::uuid as organization_id, x->>'type' as type, x->'data' as data
    from jsonb_array_elements(candidates) x
  ), events as (
    insert into webhook_event (organization_id, type, payload, created_at)
    select c.organization_id, c.type, jsonb_build_object('type', c.type, 'timestamp', webhook_time(at), 'data', c.data), at
    from c where exists (select 1 from webhook_endpoint ep
      where ep.organization_id = c.organization_id and ep.disabled_at is null and c.type = any(ep.event_types))
    returning id, organization_id, type
  )
  insert into webhook_delivery (event_id, endpoint_id, next_attempt_at, created_at)
  select e.id, ep.id, at, at from events e join webhook_endpoint ep
    on ep.organization_id = e.organization_id and ep.disabled_at is null and e.type = any(ep.event_types);
  get diagnostics queued = row_count;
  if queued > 0 then perform pg_notify('${CHANNEL}', ''); end if;
end
$$;`);
    for (const t of TRIGGERS) {
      this.addSql(`create function "${name(t)}"() returns trigger language plpgsql as $$
declare
  candidates jsonb;
begin
  if not exists (select 1 from webhook_endpoint where disabled_at is null) then return null; end if;
  select jsonb_agg(jsonb_build_object('organization_id', r.organization_id, 'type', r.type, 'data', r.data)) into candidates
  from (${t.select}) as r(organization_id, type, data);
  if candidates is not null then perform webhook_enqueue(candidates); end if;
  return null;
end
$$;`);
      const tables = t.event === 'update' ? 'old table as previous new table as changed' : `${t.event === 'delete' ? 'old' : 'new'} table as changed`;
      this.addSql(`create trigger "${name(t)}" after ${t.event} on "${t.table}"
  referencing ${tables} for each statement execute function "${name(t)}"();`);
    }
  }

  override async down(): Promise<void> {
    for (const t of TRIGGERS) {
      this.addSql(`drop trigger if exists "${name(t)}" on "${t.table}";`);
      this.addSql(`drop function if exists "${name(t)}"();`);
    }
    this.addSql('drop function if exists webhook_enqueue(jsonb);');
    this.addSql('drop function if exists webhook_template_stats(uuid);');
    this.addSql('drop function if exists webhook_time(timestamptz);');
    this.addSql('drop table if exists "webhook_attempt", "webhook_delivery", "webhook_event", "webhook_endpoint";');
  }
}
