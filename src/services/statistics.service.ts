import { NotFoundError } from '../errors';
import type { ServiceContext } from './service-context';
import { round2 } from './time';
import { uuidList } from './uuid';

/** The `stats` of a template record (decisions.md section 5, per template or slice). */
export interface TemplateStatsView {
  deltaBudget: number;
  contractors: number;
  contractorsAnswers: number;
  contractorsPending: number;
  contractorsDeclined: number;
  contractorsInRevision: number;
  contractorsIntentionIsNo: number;
  contractorsIntentionIsMaybe: number;
}

export interface AmountPercent {
  value: number;
  percent: number;
}

/** `project.statistics` (decisions.md section 5, per project). */
export interface ProjectStatisticsView {
  answered: number;
  mayAnswer: number;
  declined: number;
  contractors: number;
  tenderDocuments: number;
  budgets: {
    total: number;
    simulatedCost: number;
    totalAnticipatedTrades: number;
    totalAnticipatedOffers: number;
    budgetTradesToAssign: AmountPercent;
    projectDeviation: AmountPercent;
  };
}

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

export interface ProjectStatsRow {
  id: string;
  answered: string;
  may_answer: string;
  declined: string;
  contractors: string;
  tender_documents: string;
  total: string;
  simulated_cost: string;
  anticipated_trades: string;
  anticipated_offers: string;
  to_assign: string;
  to_assign_percent: string;
  deviation: string;
  deviation_percent: string;
}

/** pg answers bigint and numeric as strings. */
const int = (s: string | null) => Number(s ?? 0);
const money = (s: string | null) => round2(Number(s ?? 0));

/**
 * Statistics of the projects `array[?]` (ids) of the organizations `array[?]`, one row per visible project.
 * Percentages are computed on the exact numeric sums, then rounded once.
 */
export const PROJECT_STATISTICS_SQL = `
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

/** A row of PROJECT_STATISTICS_SQL as the service answers it. */
export function projectStatisticsView(r: ProjectStatsRow): ProjectStatisticsView {
  return {
    answered: int(r.answered),
    mayAnswer: int(r.may_answer),
    declined: int(r.declined),
    contractors: int(r.contractors),
    tenderDocuments: int(r.tender_documents),
    budgets: {
      total: money(r.total),
      simulatedCost: money(r.simulated_cost),
      totalAnticipatedTrades: money(r.anticipated_trades),
      totalAnticipatedOffers: money(r.anticipated_offers),
      budgetTradesToAssign: { value: money(r.to_assign), percent: money(r.to_assign_percent) },
      projectDeviation: { value: money(r.deviation), percent: money(r.deviation_percent) },
    },
  };
}

/**
 * Template and project statistics (decisions.md section 5) as SQL aggregates: one statement for any
 * number of templates or projects, limited to the caller's Administrator organizations.
 */
export class StatisticsService {
  constructor(private readonly sc: ServiceContext) {}

  /** Stats of many templates (or slices) at once, in one statement, keyed by (lowercase) template id; every visible requested id is present. */
  async templateStats(templateIds: readonly string[]): Promise<Map<string, TemplateStatsView>> {
    const ids = uuidList(templateIds);
    const out = new Map<string, TemplateStatsView>();
    if (ids.length === 0) return out;
    const rows = await this.sc.em.execute<TemplateStatsRow[]>(`
      with t as (
        select t.id, t.project_id, t.budget, t.selected_consultation_id
        from template t join project p on p.id = t.project_id
        where t.id = any(array[?]::uuid[]) and p.organization_id = any(array[?]::uuid[])
      ),
      ${DOCUMENTS_AND_TEMPLATES}
      select ts.id, coalesce(ts.retained - ts.budget, 0) as delta_budget, ts.contractors, ts.answers, ts.pending,
        ts.declined, ts.in_revision, ts.intention_no, ts.intention_maybe
      from ts`, [ids, this.organizations()]);
    for (const r of rows) {
      out.set(r.id, {
        deltaBudget: money(r.delta_budget),
        contractors: int(r.contractors),
        contractorsAnswers: int(r.answers),
        contractorsPending: int(r.pending),
        contractorsDeclined: int(r.declined),
        contractorsInRevision: int(r.in_revision),
        contractorsIntentionIsNo: int(r.intention_no),
        contractorsIntentionIsMaybe: int(r.intention_maybe),
      });
    }
    return out;
  }

  /**
   * Statistics of many projects at once, in one statement, keyed by (lowercase) project id. Projects the
   * caller may not see, or that do not exist, are absent. Archived projects are included.
   */
  async projectStatistics(projectIds: readonly string[]): Promise<Map<string, ProjectStatisticsView>> {
    const ids = uuidList(projectIds);
    const out = new Map<string, ProjectStatisticsView>();
    if (ids.length === 0) return out;
    const rows = await this.sc.em.execute<ProjectStatsRow[]>(PROJECT_STATISTICS_SQL, [ids, this.organizations()]);
    for (const r of rows) out.set(r.id, projectStatisticsView(r));
    return out;
  }

  /** #5: the statistics of one project; 404 when the caller may not see it. */
  async ofProject(projectId: string): Promise<ProjectStatisticsView> {
    const stats = (await this.projectStatistics([projectId])).get(projectId.toLowerCase());
    if (!stats) throw new NotFoundError('Project not found');
    return stats;
  }

  private organizations(): string[] {
    return uuidList(this.sc.caller.adminOrganizationIds);
  }
}
