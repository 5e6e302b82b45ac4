import type { EntityManager } from '@mikro-orm/postgresql';
import type { ProjectStatisticsView, TemplateStatsView } from '../../src/modules/statistics/statistics.service';
import { round2 } from '../../src/platform/money/money';

/**
 * The statistics formulas as they were computed before issue 10, from the documents' whole histories on
 * every read: the oracle the fuzz test (test/fuzz/statistics.fuzz.test.ts) holds the maintained
 * statistics to. Kept verbatim; only the service's read path changed.
 */
/**
 * The common tail of both statements, given a CTE `t (id, project_id, budget, selected_consultation_id)`
 * holding the visible templates and slices to look at:
 * - `ds`: their documents with `state` (status of the highest version; PENDING when none or DRAFT) and
 *   `offer` (sub_total - discount of the highest ANSWERED version, null when none);
 * - `ts`: per template, its document counters and `retained` (the selected document's offer when that
 *   document belongs to the template and has an offer, else the lowest offer; null when no offer).
 * Documents are aggregated by template alone and joined back to `t` afterwards: joining the materialized
 * CTEs first makes the planner overestimate the rows a hundredfold and pay for JIT compilation.
 */
const DOCUMENTS_AND_TEMPLATES = `
  d as (
    select d.id, d.template_id, t.project_id, d.contractor_id, d.intention, d.dce_downloaded_at
    from document d join t on t.id = d.template_id
  ),
  latest as (
    select distinct on (v.document_id) v.document_id, v.status
    from document_version v join d on d.id = v.document_id
    order by v.document_id, v.version desc
  ),
  answered as (
    select distinct on (v.document_id) v.document_id, v.sub_total - v.discount as offer
    from document_version v join d on d.id = v.document_id
    where v.status = 'ANSWERED'
    order by v.document_id, v.version desc
  ),
  ds as (
    select d.*,
      case when l.status is null or l.status = 'DRAFT' then 'PENDING' else l.status end as state,
      a.offer
    from d
    left join latest l on l.document_id = d.id
    left join answered a on a.document_id = d.id
  ),
  dt as (
    select ds.template_id,
      min(ds.offer) as lowest,
      count(*) as contractors,
      count(*) filter (where ds.state = 'ANSWERED') as answers,
      count(*) filter (where ds.state = 'PENDING') as pending,
      count(*) filter (where ds.state = 'DECLINED') as declined,
      count(*) filter (where ds.state = 'IN_REVISION') as in_revision,
      count(*) filter (where ds.intention = 'NO') as intention_no,
      count(*) filter (where ds.intention = 'MAYBE') as intention_maybe
    from ds group by ds.template_id
  ),
  ts as (
    select t.id, t.project_id, t.budget,
      coalesce(sel.offer, dt.lowest) as retained,
      coalesce(dt.contractors, 0) as contractors,
      coalesce(dt.answers, 0) as answers,
      coalesce(dt.pending, 0) as pending,
      coalesce(dt.declined, 0) as declined,
      coalesce(dt.in_revision, 0) as in_revision,
      coalesce(dt.intention_no, 0) as intention_no,
      coalesce(dt.intention_maybe, 0) as intention_maybe
    from t
    left join dt on dt.template_id = t.id
    left join ds sel on sel.id = t.selected_consultation_id and sel.template_id = t.id
  )`;

const TEMPLATE_STATS_SQL = `
      with t as (
        select t.id, t.project_id, t.budget, t.selected_consultation_id
        from template t join project p on p.id = t.project_id
        where t.id = any(array[?]::uuid[]) and p.organization_id = any(array[?]::uuid[])
      ),
      ${DOCUMENTS_AND_TEMPLATES}
      select ts.id, coalesce(ts.retained - ts.budget, 0) as delta_budget, ts.contractors, ts.answers, ts.pending,
        ts.declined, ts.in_revision, ts.intention_no, ts.intention_maybe
      from ts`;

const PROJECT_STATISTICS_SQL = `
      with p as (
        select p.id from project p
        where p.id = any(array[?]::uuid[]) and p.organization_id = any(array[?]::uuid[])
      ),
      t as (
        select t.id, t.project_id, t.budget, t.selected_consultation_id
        from template t join p on p.id = t.project_id
      ),
      ${DOCUMENTS_AND_TEMPLATES},
      documents as (
        select ds.project_id,
          count(distinct ds.contractor_id) as contractors,
          count(*) filter (where ds.state = 'ANSWERED') as answered,
          count(*) filter (where ds.state = 'DECLINED') as declined,
          count(*) filter (where ds.state in ('PENDING', 'IN_REVISION') and ds.intention is distinct from 'NO') as may_answer,
          count(*) filter (where ds.dce_downloaded_at is not null) as tender_documents
        from ds group by ds.project_id
      ),
      budgets as (
        select ts.project_id,
          sum(ts.budget) as total,
          coalesce(sum(ts.retained), 0) as anticipated_offers,
          coalesce(sum(ts.budget) filter (where ts.retained is not null), 0) as anticipated_trades,
          sum(coalesce(ts.retained, ts.budget)) as simulated_cost,
          coalesce(sum(ts.budget) filter (where ts.retained is null), 0) as to_assign
        from ts group by ts.project_id
      )
      select p.id,
        coalesce(dc.answered, 0) as answered, coalesce(dc.may_answer, 0) as may_answer,
        coalesce(dc.declined, 0) as declined, coalesce(dc.contractors, 0) as contractors,
        coalesce(dc.tender_documents, 0) as tender_documents,
        coalesce(b.total, 0) as total,
        coalesce(b.simulated_cost, 0) as simulated_cost,
        coalesce(b.anticipated_trades, 0) as anticipated_trades,
        coalesce(b.anticipated_offers, 0) as anticipated_offers,
        coalesce(b.to_assign, 0) as to_assign,
        coalesce(round(b.to_assign * 100 / nullif(b.total, 0), 2), 0) as to_assign_percent,
        coalesce(b.simulated_cost - b.total, 0) as deviation,
        coalesce(round((b.simulated_cost - b.total) * 100 / nullif(b.total, 0), 2), 0) as deviation_percent
      from p
      left join documents dc on dc.project_id = p.id
      left join budgets b on b.project_id = p.id`;

interface TemplateStatsRow {
  id: string;
  delta_budget: string;
  contractors: string;
  answers: string;
  pending: string;
  declined: string;
  in_revision: string;
  intention_no: string;
  intention_maybe: string;
}

/** Template stats by the old statement, keyed by template id. */
export async function oracleTemplateStats(em: EntityManager, templateIds: string[], organizationIds: string[]): Promise<Map<string, TemplateStatsView>> {
  const rows = await em.execute<TemplateStatsRow[]>(TEMPLATE_STATS_SQL, [templateIds, organizationIds]);
  return new Map(rows.map((r) => [r.id, {
    deltaBudget: round2(Number(r.delta_budget)),
    contractors: Number(r.contractors),
    contractorsAnswers: Number(r.answers),
    contractorsPending: Number(r.pending),
    contractorsDeclined: Number(r.declined),
    contractorsInRevision: Number(r.in_revision),
    contractorsIntentionIsNo: Number(r.intention_no),
    contractorsIntentionIsMaybe: Number(r.intention_maybe),
  }]));
}

/** pg answers bigint and numeric as strings. */
type ProjectStatsRow = Record<'id' | 'answered' | 'may_answer' | 'declined' | 'contractors' | 'tender_documents' | 'total' | 'simulated_cost' |
  'anticipated_trades' | 'anticipated_offers' | 'to_assign' | 'to_assign_percent' | 'deviation' | 'deviation_percent', string>;
const money = (s: string) => round2(Number(s));

/** Project statistics by the old statement, keyed by project id, mapped as the service mapped them. */
export async function oracleProjectStatistics(em: EntityManager, projectIds: string[], organizationIds: string[]): Promise<Map<string, ProjectStatisticsView>> {
  const rows = await em.execute<ProjectStatsRow[]>(PROJECT_STATISTICS_SQL, [projectIds, organizationIds]);
  return new Map(rows.map((r) => [r.id, {
    answered: Number(r.answered),
    mayAnswer: Number(r.may_answer),
    declined: Number(r.declined),
    contractors: Number(r.contractors),
    tenderDocuments: Number(r.tender_documents),
    budgets: {
      total: money(r.total),
      simulatedCost: money(r.simulated_cost),
      totalAnticipatedTrades: money(r.anticipated_trades),
      totalAnticipatedOffers: money(r.anticipated_offers),
      budgetTradesToAssign: { value: money(r.to_assign), percent: money(r.to_assign_percent) },
      projectDeviation: { value: money(r.deviation), percent: money(r.deviation_percent) },
    },
  }]));
}

/** The offer's version number and sending time of a document: those of its highest ANSWERED version; null when none. */
export interface DocumentOfferVersion {
  version: number | null;
  sentAt: string | null;
}

const OFFER_VERSIONS = (from: string) => `
  select d.id, a.version, to_char(a.sent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as sent_at
  from ${from}
  left join lateral (
    select v.version, v.sent_at from document_version v
    where v.document_id = d.id and v.status = 'ANSWERED' order by v.version desc limit 1
  ) a on true`;

const offerVersionMap = (rows: Array<{ id: string; version: number | null; sent_at: string | null }>) =>
  new Map<string, DocumentOfferVersion>(rows.map((r) => [r.id, { version: r.version, sentAt: r.sent_at }]));

/** By document id, from the whole histories, for every document of the projects (whatever their organization). */
export async function oracleOfferVersions(em: EntityManager, projectIds: string[]): Promise<Map<string, DocumentOfferVersion>> {
  return offerVersionMap(await em.execute(
    `${OFFER_VERSIONS('document d join template t on t.id = d.template_id')} where t.project_id = any(array[?]::uuid[])`, [projectIds]));
}

/** The same, as document_statistics keeps it (Migration20261231000000_statistics_offer_version). */
export async function maintainedOfferVersions(em: EntityManager, projectIds: string[]): Promise<Map<string, DocumentOfferVersion>> {
  return offerVersionMap(await em.execute(`
    select ds.document_id as id, ds.offer_version as version,
      to_char(ds.offer_sent_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as sent_at
    from document_statistics ds where ds.project_id = any(array[?]::uuid[])`, [projectIds]));
}
