import { Migration } from '@mikro-orm/migrations';

/**
 * The offer's version number and sending time kept beside the offer in `document_statistics` (issue 13,
 * docs/benchmarks.md, leveling): the leveling read them from the documents' histories at every read (a
 * sorted pass over the ANSWERED versions of every offered document, ~0.2 s of 1,000 projects' leveling).
 *
 * `offer_version` and `offer_sent_at` are those of the version the offer is taken from (the highest
 * ANSWERED one): null together with `offer_sub_total` and `offer_discount`. The functions of
 * Migration20261220000000_statistics that write `document_statistics` are replaced by the same ones writing
 * the two columns too, and the version trigger also reacts to a change of `sent_at`. `down` puts back the
 * functions without them (the same text generated without the columns).
 */

/** The columns of the offer written by the functions, with or without its version and sending time. */
const offerColumns = (withVersion: boolean) => (withVersion
  ? ['offer_sub_total', 'offer_discount', 'offer_version', 'offer_sent_at']
  : ['offer_sub_total', 'offer_discount']);

/** statistics_refresh_documents of Migration20261220000000_statistics, writing `offerColumns`. */
function refreshDocuments(withVersion: boolean): string {
  const offer = offerColumns(withVersion);
  const columns = ['template_id', 'project_id', 'contractor_id', 'intention', 'downloaded', 'state', ...offer];
  return `create or replace function statistics_refresh_documents(ids uuid[]) returns void language plpgsql
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
      a.sub_total as offer_sub_total, a.discount as offer_discount${withVersion ? ', a.version as offer_version, a.sent_at as offer_sent_at' : ''}
    from (select distinct unnest(ids) as id) i
    join document d on d.id = i.id
    join template t on t.id = d.template_id
    left join lateral (
      select v.status from document_version v where v.document_id = d.id order by v.version desc limit 1
    ) l on true
    left join lateral (
      select v.sub_total, v.discount, v.version, v.sent_at from document_version v
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
    insert into document_statistics as s (document_id, ${columns.join(', ')})
    select * from fresh
    on conflict (document_id) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}
    where (${columns.map((c) => `s.${c}`).join(', ')})
      is distinct from (${columns.map((c) => `excluded.${c}`).join(', ')})
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
end $$;`;
}

/**
 * statistics_rebuild (everything from scratch: after a TRUNCATE, and bench/dataset.ts) keeps its name and
 * callers: the function of Migration20261220000000_statistics is renamed statistics_rebuild_rows, and the new
 * one runs it then writes the offers' versions, in one pass over the ANSWERED versions.
 */
const FILL_OFFER_VERSIONS = `update document_statistics ds set offer_version = a.version, offer_sent_at = a.sent_at
  from (select distinct on (v.document_id) v.document_id, v.version, v.sent_at from document_version v
        where v.status = 'ANSWERED' order by v.document_id, v.version desc) a
  where a.document_id = ds.document_id`;
const REBUILD = `create function statistics_rebuild() returns void language plpgsql as $$
begin
  perform statistics_rebuild_rows();
  ${FILL_OFFER_VERSIONS};
end $$;`;

/** statistics_on_document_version, comparing `sent_at` too when the rows keep it. */
function onDocumentVersion(withVersion: boolean): string {
  const read = `document_id, version, status, sub_total, discount${withVersion ? ', sent_at' : ''}`;
  return `create or replace function statistics_on_document_version() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform statistics_refresh_documents(array(select distinct n.document_id from new_rows n));
  elsif tg_op = 'DELETE' then
    perform statistics_refresh_documents(array(select distinct o.document_id from old_rows o));
  else
    perform statistics_refresh_documents(array(
      select document_id from (select ${read} from new_rows
                               except select ${read} from old_rows) n
      union
      select document_id from (select ${read} from old_rows
                               except select ${read} from new_rows) o));
  end if;
  return null;
end $$;`;
}

export class Migration20261231000000_statistics_offer_version extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "document_statistics" add column "offer_version" integer null, add column "offer_sent_at" timestamptz null;`);
    this.addSql(refreshDocuments(true));
    this.addSql(onDocumentVersion(true));
    this.addSql(`alter function statistics_rebuild() rename to statistics_rebuild_rows;`);
    this.addSql(REBUILD);
    // Only the two new columns to fill: the rows are otherwise already right.
    this.addSql(`${FILL_OFFER_VERSIONS};`);
    this.addSql(`analyze document_statistics;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function statistics_rebuild();`);
    this.addSql(`alter function statistics_rebuild_rows() rename to statistics_rebuild;`);
    this.addSql(onDocumentVersion(false));
    this.addSql(refreshDocuments(false));
    this.addSql(`alter table "document_statistics" drop column if exists "offer_version", drop column if exists "offer_sent_at";`);
  }
}
