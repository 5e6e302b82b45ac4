import { Migration } from '@mikro-orm/migrations';

/**
 * Change capture for live dashboards (docs/subscriptions.md): every write to a table whose rows change what a
 * dashboard shows sends a NOTIFY on the channel `tender_changes`, whoever writes (this service, the contractor
 * portal, psql). PostgreSQL delivers notifications on commit and drops them on rollback.
 *
 * The payload is a compact JSON object of ids only, never personal data, well under the 8,000-byte limit:
 * `{"kind", "organization", "project", "template", "main", "document"}`, the last three when the record has them
 * (`main` is the template itself, or the main template of a slice).
 *
 * At most one notification per changed record per transaction: the payload is a function of the record's
 * identity only (no operation, no values), and PostgreSQL delivers identical payloads sent on one channel in
 * one transaction once. A version is reported as its document (several versions of one document written
 * together make one notification), a project's trades and managers as the project.
 *
 * Statement-level triggers over transition tables: a statement writing 500 rows runs one join to find their
 * projects and organizations, not 500. PostgreSQL allows a transition table only on a trigger of one event,
 * hence three triggers per table, all calling the table's function. A row deleted by a cascade whose parent
 * is already gone is reported by that parent (a template deleted reports the template, not its documents).
 * Names start with `change_event_`, apart from any other trigger on these tables.
 */

const CHANNEL = 'tender_changes';

/** Per table: the kind reported and the select of the payloads from the transition table `changed`. */
const TABLES: Record<string, string> = {
  project: `select jsonb_build_object('kind', 'project', 'organization', c.organization_id, 'project', c.id)::text as payload
    from changed c`,
  project_manager: `select jsonb_build_object('kind', 'project', 'organization', p.organization_id, 'project', p.id)::text as payload
    from changed c join project p on p.id = c.project_id`,
  project_trade: `select jsonb_build_object('kind', 'trade', 'organization', p.organization_id, 'project', p.id)::text as payload
    from changed c join project p on p.id = c.project_id`,
  template: `select jsonb_build_object('kind', 'template', 'organization', p.organization_id, 'project', p.id,
      'template', c.id, 'main', coalesce(c.parent_id, c.id))::text as payload
    from changed c join project p on p.id = c.project_id`,
  document: `select jsonb_build_object('kind', 'document', 'organization', p.organization_id, 'project', p.id,
      'template', t.id, 'main', coalesce(t.parent_id, t.id), 'document', c.id)::text as payload
    from changed c join template t on t.id = c.template_id join project p on p.id = t.project_id`,
  document_version: `select jsonb_build_object('kind', 'version', 'organization', p.organization_id, 'project', p.id,
      'template', t.id, 'main', coalesce(t.parent_id, t.id), 'document', d.id)::text as payload
    from changed c join document d on d.id = c.document_id join template t on t.id = d.template_id
    join project p on p.id = t.project_id`,
};

const EVENTS = [
  ['insert', 'new'],
  ['update', 'new'],
  ['delete', 'old'],
] as const;

export class Migration20261230000000_change_events extends Migration {
  override async up(): Promise<void> {
    for (const [table, select] of Object.entries(TABLES)) {
      // distinct: a statement touching many rows of one record (versions of a document) notifies once.
      this.addSql(`create function "change_event_${table}"() returns trigger language plpgsql as $$
begin
  perform pg_notify('${CHANNEL}', s.payload) from (select distinct payload from (${select}) r) s;
  return null;
end
$$;`);
      for (const [event, rows] of EVENTS) {
        this.addSql(`create trigger "change_event_${table}_${event}" after ${event} on "${table}"
  referencing ${rows} table as changed for each statement execute function "change_event_${table}"();`);
      }
    }
  }

  override async down(): Promise<void> {
    for (const table of Object.keys(TABLES)) {
      for (const [event] of EVENTS) this.addSql(`drop trigger if exists "change_event_${table}_${event}" on "${table}";`);
      this.addSql(`drop function if exists "change_event_${table}"();`);
    }
  }
}
