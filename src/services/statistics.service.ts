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

/** Counters are integer columns (numbers); delta_budget is numeric (a string). */
interface TemplateStatsRow {
  id: string;
  delta_budget: string;
  contractors: number;
  answers: number;
  pending: number;
  declined: number;
  in_revision: number;
  intention_no: number;
  intention_maybe: number;
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

/** pg answers bigint and numeric as strings, integer as numbers. */
const int = (s: string | number | null) => Number(s ?? 0);
const money = (s: string | null) => round2(Number(s ?? 0));

/**
 * Stats of the templates `array[?]` (ids) of the organizations `array[?]`: their maintained row
 * (Migration20261220000000_statistics), with the retained offer's sub_total and discount subtracted here.
 */
const TEMPLATE_STATS_SQL = `
  select ts.template_id as id,
    coalesce(ts.retained_sub_total - ts.retained_discount - ts.budget, 0) as delta_budget,
    ts.contractors, ts.answers, ts.pending, ts.declined, ts.in_revision, ts.intention_no, ts.intention_maybe
  from template_statistics ts join project p on p.id = ts.project_id
  where ts.template_id = any(array[?]::uuid[]) and p.organization_id = any(array[?]::uuid[])`;

/**
 * Statistics of the projects `array[?]` (ids) of the organizations `array[?]`, one row per visible project.
 * One maintained row per project (its sums in cents, made numeric with two decimals again here, as the
 * sums of numeric(14,2) amounts were); percentages are computed on those exact sums, then rounded once.
 */
export const PROJECT_STATISTICS_SQL = `
  select p.id,
    coalesce(ps.answered, 0) as answered, coalesce(ps.may_answer, 0) as may_answer,
    coalesce(ps.declined, 0) as declined, coalesce(ps.contractors, 0) as contractors,
    coalesce(ps.tender_documents, 0) as tender_documents,
    coalesce(b.total, 0) as total,
    coalesce(b.simulated_cost, 0) as simulated_cost,
    coalesce(b.anticipated_trades, 0) as anticipated_trades,
    coalesce(b.anticipated_offers, 0) as anticipated_offers,
    coalesce(b.to_assign, 0) as to_assign,
    coalesce(round(b.to_assign * 100 / nullif(b.total, 0), 2), 0) as to_assign_percent,
    coalesce(b.simulated_cost - b.total, 0) as deviation,
    coalesce(round((b.simulated_cost - b.total) * 100 / nullif(b.total, 0), 2), 0) as deviation_percent
  from project p
  left join project_statistics ps on ps.project_id = p.id
  cross join lateral (
    select ps.total_cents * 0.01 as total, ps.simulated_cost_cents * 0.01 as simulated_cost,
      ps.anticipated_trades_cents * 0.01 as anticipated_trades, ps.anticipated_offers_cents * 0.01 as anticipated_offers,
      ps.to_assign_cents * 0.01 as to_assign
  ) b
  where p.id = any(array[?]::uuid[]) and p.organization_id = any(array[?]::uuid[])`;

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
 * Template and project statistics (decisions.md section 5), read from the rows triggers keep up to date at
 * every write (docs/statistics.md): one indexed statement for any number of templates or projects, limited
 * to the caller's Administrator organizations, whatever the length of the documents' histories.
 */
export class StatisticsService {
  constructor(private readonly sc: ServiceContext) {}

  /** Stats of many templates (or slices) at once, in one statement, keyed by (lowercase) template id; every visible requested id is present. */
  async templateStats(templateIds: readonly string[]): Promise<Map<string, TemplateStatsView>> {
    const ids = uuidList(templateIds);
    const out = new Map<string, TemplateStatsView>();
    if (ids.length === 0) return out;
    const rows = await this.sc.em.execute<TemplateStatsRow[]>(TEMPLATE_STATS_SQL, [ids, this.organizations()]);
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
