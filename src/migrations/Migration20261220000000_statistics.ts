// Over 400 lines: a committed migration, applied as it is; its SQL is never changed (its functions and triggers in one step).
import { Migration } from '@mikro-orm/migrations';

/**
 * Statistics kept at write time (docs/statistics.md): what decisions.md section 5 derives from a document's
 * history is stored once per document, template and project, and updated by triggers in the transaction
 * that writes the history, whoever writes it (this service, or plain SQL from elsewhere on the platform).
 *
 * - `document_statistics`: per document, its state (status of the highest version; PENDING when none or
 *   DRAFT) and offer (sub_total and discount of the highest ANSWERED version), with what the counters read
 *   of the document (template, project, contractor, intention, consultation file downloaded).
 * - `template_statistics`: per template or slice, its budget, retained offer (the selected document's offer
 *   when that document belongs to the template and has one, else the lowest offer) and document counters.
 * - `project_statistics`: per project, its organization, its distinct invited contractors and the sums of
 *   its templates' counters and amounts. Sums are bigint cents: exact, and a sum of numeric(14,2) amounts may not fit
 *   numeric(14,2) (the cents of 92,000 templates of the largest budget still fit).
 *
 * Each trigger recomputes the rows that depend on what its statement changed, from the current rows
 * (never by adding deltas), after locking them: see statistics_refresh_documents. The refresh functions
 * keep generic plans: planning their statements anew at each write cost more than running them. Offers are stored as
 * their sub_total and discount pair (numeric(14,2) each) so that the difference is computed, exactly and
 * without overflow, where it is read.
 *
 * Above 400 lines on purpose: a migration is applied as one unit and never edited once released; its tables,
 * functions and triggers depend on one another and are read together.
 */
/**
 * A project's sums over its templates' rows (`where`), in cents; grouped by `groupBy` when given. The
 * formulas of decisions.md section 5: a template's retained offer counts, else its budget.
 */
const PROJECT_SUMS = (where: string, groupBy?: string) => `
  select ${groupBy ? `${groupBy},` : ''}
    coalesce(sum(ts.answers), 0)::int as answered,
    coalesce(sum(ts.declined), 0)::int as declined,
    coalesce(sum(ts.may_answer), 0)::int as may_answer,
    coalesce(sum(ts.tender_documents), 0)::int as tender_documents,
    coalesce(sum(ts.budget_cents), 0)::bigint as total_cents,
    coalesce(sum(coalesce(ts.retained_cents, ts.budget_cents)), 0)::bigint as simulated_cost_cents,
    coalesce(sum(ts.budget_cents) filter (where ts.retained_cents is not null), 0)::bigint as anticipated_trades_cents,
    coalesce(sum(ts.retained_cents), 0)::bigint as anticipated_offers_cents,
    coalesce(sum(ts.budget_cents) filter (where ts.retained_cents is null), 0)::bigint as to_assign_cents
  from (
    select ts.project_id, ts.answers, ts.declined, ts.may_answer, ts.tender_documents,
      (ts.budget * 100)::bigint as budget_cents,
      ((ts.retained_sub_total - ts.retained_discount) * 100)::bigint as retained_cents
    from template_statistics ts where ${where}
  ) ts
  ${groupBy ? `group by ${groupBy}` : ''}`;

export class Migration20261220000000_statistics extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "document_statistics" (
      "document_id" uuid not null primary key,
      "template_id" uuid not null,
      "project_id" uuid not null,
      "contractor_id" uuid not null,
      "intention" text null,
      "downloaded" boolean not null,
      "state" text not null check ("state" in ('PENDING', 'ANSWERED', 'IN_REVISION', 'DECLINED')),
      "offer_sub_total" numeric(14,2) null,
      "offer_discount" numeric(14,2) null
    );`);
    this.addSql(`create index "document_statistics_template_id_index" on "document_statistics" ("template_id");`);
    this.addSql(`create index "document_statistics_project_id_contractor_id_index" on "document_statistics" ("project_id", "contractor_id");`);

    this.addSql(`create table "template_statistics" (
      "template_id" uuid not null primary key,
      "project_id" uuid not null,
      "budget" numeric(14,2) not null,
      "retained_sub_total" numeric(14,2) null,
      "retained_discount" numeric(14,2) null,
      "contractors" integer not null,
      "answers" integer not null,
      "pending" integer not null,
      "declined" integer not null,
      "in_revision" integer not null,
      "intention_no" integer not null,
      "intention_maybe" integer not null,
      "may_answer" integer not null,
      "tender_documents" integer not null
    );`);
    this.addSql(`create index "template_statistics_project_id_index" on "template_statistics" ("project_id");`);

    // Read by organization: the caller's projects' rows are neighbours in that index whatever the number
    // of other organizations' rows. Rewritten at every answer: room on each page keeps updates in place.
    this.addSql(`create table "project_statistics" (
      "project_id" uuid not null primary key,
      "organization_id" uuid not null,
      "contractors" integer not null,
      "answered" integer not null,
      "declined" integer not null,
      "may_answer" integer not null,
      "tender_documents" integer not null,
      "total_cents" bigint not null,
      "simulated_cost_cents" bigint not null,
      "anticipated_trades_cents" bigint not null,
      "anticipated_offers_cents" bigint not null,
      "to_assign_cents" bigint not null
    ) with (fillfactor = 70);`);
    this.addSql(`create index "project_statistics_organization_id_project_id_index" on "project_statistics" ("organization_id", "project_id");`);

    // Documents: recomputed from their versions, then their templates and projects when they changed.
    this.addSql(`create function statistics_refresh_documents(ids uuid[]) returns void language plpgsql
  set plan_cache_mode = force_generic_plan as $$
declare
  templates uuid[];
  projects uuid[];
begin
  if coalesce(cardinality(ids), 0) = 0 then return; end if;
  -- Writers of the same documents take turns here; under READ COMMITTED each statement below then sees
  -- what the previous one committed, so the last to commit leaves rows computed from every change.
  perform 1 from document_statistics s where s.document_id = any(ids) order by s.document_id for update;
  with fresh as (
    select d.id as document_id, d.template_id, t.project_id, d.contractor_id, d.intention,
      d.dce_downloaded_at is not null as downloaded,
      case when l.status is null or l.status = 'DRAFT' then 'PENDING' else l.status end as state,
      a.sub_total as offer_sub_total, a.discount as offer_discount
    from (select distinct unnest(ids) as id) i
    join document d on d.id = i.id
    join template t on t.id = d.template_id
    left join lateral (
      select v.status from document_version v where v.document_id = d.id order by v.version desc limit 1
    ) l on true
    left join lateral (
      select v.sub_total, v.discount from document_version v
      where v.document_id = d.id and v.status = 'ANSWERED' order by v.version desc limit 1
    ) a on true
  ),
  old as (select s.* from document_statistics s where s.document_id = any(ids)),
  gone as (
    delete from document_statistics s where s.document_id = any(ids)
      and not exists (select 1 from fresh f where f.document_id = s.document_id)
    returning s.document_id
  ),
  saved as (
    insert into document_statistics as s (document_id, template_id, project_id, contractor_id, intention, downloaded, state, offer_sub_total, offer_discount)
    select * from fresh
    on conflict (document_id) do update set template_id = excluded.template_id, project_id = excluded.project_id,
      contractor_id = excluded.contractor_id, intention = excluded.intention, downloaded = excluded.downloaded,
      state = excluded.state, offer_sub_total = excluded.offer_sub_total, offer_discount = excluded.offer_discount
    where (s.template_id, s.project_id, s.contractor_id, s.intention, s.downloaded, s.state, s.offer_sub_total, s.offer_discount)
      is distinct from (excluded.template_id, excluded.project_id, excluded.contractor_id, excluded.intention, excluded.downloaded,
        excluded.state, excluded.offer_sub_total, excluded.offer_discount)
    returning s.document_id, s.template_id, s.project_id, s.contractor_id
  ),
  changes as (
    select o.template_id as old_template, o.project_id as old_project, o.contractor_id as old_contractor,
      n.template_id as new_template, n.project_id as new_project, n.contractor_id as new_contractor
    from (select document_id from gone union all select document_id from saved) c
    left join old o on o.document_id = c.document_id
    left join saved n on n.document_id = c.document_id
  )
  select
    array(select old_template from changes where old_template is not null
      union select new_template from changes where new_template is not null),
    array(select old_project from changes
        where old_project is not null and (old_project, old_contractor) is distinct from (new_project, new_contractor)
      union select new_project from changes
        where new_project is not null and (old_project, old_contractor) is distinct from (new_project, new_contractor))
  into templates, projects
  from (select 1) one;
  -- Projects whose distinct contractors changed, and those whose templates' rows changed.
  templates := statistics_refresh_templates(templates);
  perform statistics_refresh_projects(array(select unnest(projects) union select unnest(templates)));
end $$;`);

    // Answers the projects whose templates' rows changed (before or after): their sums are refreshed next.
    this.addSql(`create function statistics_refresh_templates(ids uuid[]) returns uuid[] language plpgsql
  set plan_cache_mode = force_generic_plan as $$
declare
  projects uuid[];
begin
  if coalesce(cardinality(ids), 0) = 0 then return '{}'; end if;
  perform 1 from template_statistics s where s.template_id = any(ids) order by s.template_id for update;
  with fresh as (
    select t.id as template_id, t.project_id, t.budget, r.offer_sub_total as retained_sub_total, r.offer_discount as retained_discount,
      c.contractors, c.answers, c.pending, c.declined, c.in_revision, c.intention_no, c.intention_maybe, c.may_answer, c.tender_documents
    from (select distinct unnest(ids) as id) i
    join template t on t.id = i.id
    cross join lateral (
      select count(*)::int as contractors,
        (count(*) filter (where ds.state = 'ANSWERED'))::int as answers,
        (count(*) filter (where ds.state = 'PENDING'))::int as pending,
        (count(*) filter (where ds.state = 'DECLINED'))::int as declined,
        (count(*) filter (where ds.state = 'IN_REVISION'))::int as in_revision,
        (count(*) filter (where ds.intention = 'NO'))::int as intention_no,
        (count(*) filter (where ds.intention = 'MAYBE'))::int as intention_maybe,
        (count(*) filter (where ds.state in ('PENDING', 'IN_REVISION') and ds.intention is distinct from 'NO'))::int as may_answer,
        (count(*) filter (where ds.downloaded))::int as tender_documents
      from document_statistics ds where ds.template_id = t.id
    ) c
    left join lateral (
      select x.offer_sub_total, x.offer_discount from (
        select 0 as rank, ds.offer_sub_total, ds.offer_discount from document_statistics ds
        where ds.document_id = t.selected_consultation_id and ds.template_id = t.id and ds.offer_sub_total is not null
        union all
        (select 1, ds.offer_sub_total, ds.offer_discount from document_statistics ds
         where ds.template_id = t.id and ds.offer_sub_total is not null
         order by ds.offer_sub_total - ds.offer_discount limit 1)
      ) x order by x.rank limit 1
    ) r on true
  ),
  old as (select s.template_id, s.project_id from template_statistics s where s.template_id = any(ids)),
  gone as (
    delete from template_statistics s where s.template_id = any(ids)
      and not exists (select 1 from fresh f where f.template_id = s.template_id)
    returning s.template_id
  ),
  saved as (
    insert into template_statistics as s (template_id, project_id, budget, retained_sub_total, retained_discount, contractors,
      answers, pending, declined, in_revision, intention_no, intention_maybe, may_answer, tender_documents)
    select * from fresh
    on conflict (template_id) do update set project_id = excluded.project_id, budget = excluded.budget,
      retained_sub_total = excluded.retained_sub_total, retained_discount = excluded.retained_discount,
      contractors = excluded.contractors, answers = excluded.answers, pending = excluded.pending,
      declined = excluded.declined, in_revision = excluded.in_revision, intention_no = excluded.intention_no,
      intention_maybe = excluded.intention_maybe, may_answer = excluded.may_answer, tender_documents = excluded.tender_documents
    where (s.project_id, s.budget, s.retained_sub_total, s.retained_discount, s.contractors, s.answers, s.pending, s.declined,
        s.in_revision, s.intention_no, s.intention_maybe, s.may_answer, s.tender_documents)
      is distinct from (excluded.project_id, excluded.budget, excluded.retained_sub_total, excluded.retained_discount,
        excluded.contractors, excluded.answers, excluded.pending, excluded.declined, excluded.in_revision,
        excluded.intention_no, excluded.intention_maybe, excluded.may_answer, excluded.tender_documents)
    returning s.template_id, s.project_id
  )
  select array(
    select n.project_id from saved n
    union select o.project_id from old o where o.template_id in (select template_id from saved union all select template_id from gone))
  into projects
  from (select 1) one;
  return projects;
end $$;`);

    this.addSql(`create function statistics_refresh_projects(ids uuid[]) returns void language plpgsql
  set plan_cache_mode = force_generic_plan as $$
begin
  if coalesce(cardinality(ids), 0) = 0 then return; end if;
  perform 1 from project_statistics s where s.project_id = any(ids) order by s.project_id for update;
  delete from project_statistics s where s.project_id = any(ids)
    and not exists (select 1 from project p where p.id = s.project_id);
  insert into project_statistics as s (project_id, organization_id, contractors, answered, declined, may_answer, tender_documents,
    total_cents, simulated_cost_cents, anticipated_trades_cents, anticipated_offers_cents, to_assign_cents)
  select p.id, p.organization_id, (select count(distinct ds.contractor_id) from document_statistics ds where ds.project_id = p.id),
    b.answered, b.declined, b.may_answer, b.tender_documents,
    b.total_cents, b.simulated_cost_cents, b.anticipated_trades_cents, b.anticipated_offers_cents, b.to_assign_cents
  from (select distinct unnest(ids) as id) i join project p on p.id = i.id
  cross join lateral (${PROJECT_SUMS('ts.project_id = p.id')}) b
  on conflict (project_id) do update set organization_id = excluded.organization_id, contractors = excluded.contractors, answered = excluded.answered,
    declined = excluded.declined, may_answer = excluded.may_answer, tender_documents = excluded.tender_documents,
    total_cents = excluded.total_cents, simulated_cost_cents = excluded.simulated_cost_cents,
    anticipated_trades_cents = excluded.anticipated_trades_cents, anticipated_offers_cents = excluded.anticipated_offers_cents,
    to_assign_cents = excluded.to_assign_cents
  where (s.organization_id, s.contractors, s.answered, s.declined, s.may_answer, s.tender_documents, s.total_cents, s.simulated_cost_cents,
      s.anticipated_trades_cents, s.anticipated_offers_cents, s.to_assign_cents)
    is distinct from (excluded.organization_id, excluded.contractors, excluded.answered, excluded.declined, excluded.may_answer, excluded.tender_documents,
      excluded.total_cents, excluded.simulated_cost_cents, excluded.anticipated_trades_cents, excluded.anticipated_offers_cents,
      excluded.to_assign_cents);
end $$;`);

    // Everything from scratch, set-based: the backfill below, and after a TRUNCATE of a source table.
    this.addSql(`create function statistics_rebuild() returns void language plpgsql as $$
begin
  lock table document_statistics, template_statistics, project_statistics in exclusive mode;
  delete from document_statistics;
  delete from template_statistics;
  delete from project_statistics;
  insert into document_statistics (document_id, template_id, project_id, contractor_id, intention, downloaded, state, offer_sub_total, offer_discount)
  select d.id, d.template_id, t.project_id, d.contractor_id, d.intention, d.dce_downloaded_at is not null,
    case when l.status is null or l.status = 'DRAFT' then 'PENDING' else l.status end, a.sub_total, a.discount
  from document d join template t on t.id = d.template_id
  left join (select distinct on (v.document_id) v.document_id, v.status from document_version v
             order by v.document_id, v.version desc) l on l.document_id = d.id
  left join (select distinct on (v.document_id) v.document_id, v.sub_total, v.discount from document_version v
             where v.status = 'ANSWERED' order by v.document_id, v.version desc) a on a.document_id = d.id;
  insert into template_statistics (template_id, project_id, budget, retained_sub_total, retained_discount, contractors,
    answers, pending, declined, in_revision, intention_no, intention_maybe, may_answer, tender_documents)
  select t.id, t.project_id, t.budget,
    case when sel.document_id is not null then sel.offer_sub_total else low.offer_sub_total end,
    case when sel.document_id is not null then sel.offer_discount else low.offer_discount end,
    coalesce(c.contractors, 0), coalesce(c.answers, 0), coalesce(c.pending, 0), coalesce(c.declined, 0),
    coalesce(c.in_revision, 0), coalesce(c.intention_no, 0), coalesce(c.intention_maybe, 0), coalesce(c.may_answer, 0),
    coalesce(c.tender_documents, 0)
  from template t
  left join (
    select ds.template_id, count(*) as contractors,
      count(*) filter (where ds.state = 'ANSWERED') as answers,
      count(*) filter (where ds.state = 'PENDING') as pending,
      count(*) filter (where ds.state = 'DECLINED') as declined,
      count(*) filter (where ds.state = 'IN_REVISION') as in_revision,
      count(*) filter (where ds.intention = 'NO') as intention_no,
      count(*) filter (where ds.intention = 'MAYBE') as intention_maybe,
      count(*) filter (where ds.state in ('PENDING', 'IN_REVISION') and ds.intention is distinct from 'NO') as may_answer,
      count(*) filter (where ds.downloaded) as tender_documents
    from document_statistics ds group by ds.template_id
  ) c on c.template_id = t.id
  left join (
    select distinct on (ds.template_id) ds.template_id, ds.offer_sub_total, ds.offer_discount from document_statistics ds
    where ds.offer_sub_total is not null order by ds.template_id, ds.offer_sub_total - ds.offer_discount
  ) low on low.template_id = t.id
  left join document_statistics sel on sel.document_id = t.selected_consultation_id and sel.template_id = t.id
    and sel.offer_sub_total is not null;
  insert into project_statistics (project_id, organization_id, contractors, answered, declined, may_answer, tender_documents,
    total_cents, simulated_cost_cents, anticipated_trades_cents, anticipated_offers_cents, to_assign_cents)
  select p.id, p.organization_id, coalesce(c.contractors, 0), coalesce(b.answered, 0), coalesce(b.declined, 0), coalesce(b.may_answer, 0),
    coalesce(b.tender_documents, 0), coalesce(b.total_cents, 0), coalesce(b.simulated_cost_cents, 0),
    coalesce(b.anticipated_trades_cents, 0), coalesce(b.anticipated_offers_cents, 0), coalesce(b.to_assign_cents, 0)
  from project p
  left join (select ds.project_id, count(distinct ds.contractor_id) as contractors from document_statistics ds
             group by ds.project_id) c on c.project_id = p.id
  left join (${PROJECT_SUMS('true', 'ts.project_id')}) b on b.project_id = p.id;
end $$;`);

    // The triggers: statement-level, so a bulk write recomputes each affected row once. Transition tables
    // carry no pairing of old and new rows: an update is what differs between them, in the columns read.
    this.addSql(`create function statistics_on_document_version() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform statistics_refresh_documents(array(select distinct n.document_id from new_rows n));
  elsif tg_op = 'DELETE' then
    perform statistics_refresh_documents(array(select distinct o.document_id from old_rows o));
  else
    perform statistics_refresh_documents(array(
      select document_id from (select document_id, version, status, sub_total, discount from new_rows
                               except select document_id, version, status, sub_total, discount from old_rows) n
      union
      select document_id from (select document_id, version, status, sub_total, discount from old_rows
                               except select document_id, version, status, sub_total, discount from new_rows) o));
  end if;
  return null;
end $$;`);
    this.addSql(`create function statistics_on_document() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform statistics_refresh_documents(array(select n.id from new_rows n));
  elsif tg_op = 'DELETE' then
    perform statistics_refresh_documents(array(select o.id from old_rows o));
  else
    perform statistics_refresh_documents(array(
      select id from (select id, template_id, contractor_id, intention, dce_downloaded_at is not null from new_rows
                      except select id, template_id, contractor_id, intention, dce_downloaded_at is not null from old_rows) n
      union
      select id from (select id, template_id, contractor_id, intention, dce_downloaded_at is not null from old_rows
                      except select id, template_id, contractor_id, intention, dce_downloaded_at is not null from new_rows) o));
  end if;
  return null;
end $$;`);
    this.addSql(`create function statistics_on_template() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform statistics_refresh_projects(statistics_refresh_templates(array(select n.id from new_rows n)));
  elsif tg_op = 'DELETE' then
    perform statistics_refresh_projects(statistics_refresh_templates(array(select o.id from old_rows o)));
  else
    -- A template moved to another project moves its documents' rows too.
    perform statistics_refresh_documents(array(
      select d.id from document d where d.template_id in (
        select id from (select id, project_id from new_rows except select id, project_id from old_rows) m)));
    perform statistics_refresh_projects(statistics_refresh_templates(array(
      select id from (select id, project_id, budget, selected_consultation_id from new_rows
                      except select id, project_id, budget, selected_consultation_id from old_rows) n
      union
      select id from (select id, project_id, budget, selected_consultation_id from old_rows
                      except select id, project_id, budget, selected_consultation_id from new_rows) o)));
  end if;
  return null;
end $$;`);
    // A project's id changing moves its templates (on update cascade), whose trigger follows.
    this.addSql(`create function statistics_on_project() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform statistics_refresh_projects(array(select n.id from new_rows n));
  elsif tg_op = 'DELETE' then
    perform statistics_refresh_projects(array(select o.id from old_rows o));
  else
    perform statistics_refresh_projects(array(
      select id from (select id, organization_id from new_rows except select id, organization_id from old_rows) n));
  end if;
  return null;
end $$;`);
    this.addSql(`create function statistics_on_truncate() returns trigger language plpgsql as $$
begin
  perform statistics_rebuild();
  return null;
end $$;`);

    for (const table of ['document_version', 'document', 'template', 'project']) {
      const fn = `statistics_on_${table}`;
      this.addSql(`create trigger "${table}_statistics_insert" after insert on "${table}" referencing new table as new_rows for each statement execute function ${fn}();`);
      this.addSql(`create trigger "${table}_statistics_update" after update on "${table}" referencing old table as old_rows new table as new_rows for each statement execute function ${fn}();`);
      this.addSql(`create trigger "${table}_statistics_delete" after delete on "${table}" referencing old table as old_rows for each statement execute function ${fn}();`);
      this.addSql(`create trigger "${table}_statistics_truncate" after truncate on "${table}" for each statement execute function statistics_on_truncate();`);
    }

    this.addSql(`select statistics_rebuild();`);
    this.addSql(`analyze document_statistics, template_statistics, project_statistics;`);
  }

  override async down(): Promise<void> {
    for (const table of ['document_version', 'document', 'template', 'project']) {
      for (const event of ['insert', 'update', 'delete', 'truncate']) this.addSql(`drop trigger if exists "${table}_statistics_${event}" on "${table}";`);
      this.addSql(`drop function if exists statistics_on_${table}();`);
    }
    this.addSql(`drop function if exists statistics_on_truncate();`);
    this.addSql(`drop function if exists statistics_rebuild();`);
    this.addSql(`drop function if exists statistics_refresh_documents(uuid[]);`);
    this.addSql(`drop function if exists statistics_refresh_templates(uuid[]);`);
    this.addSql(`drop function if exists statistics_refresh_projects(uuid[]);`);
    this.addSql(`drop table if exists "document_statistics";`);
    this.addSql(`drop table if exists "template_statistics";`);
    this.addSql(`drop table if exists "project_statistics";`);
  }
}
