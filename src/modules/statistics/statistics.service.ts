import { NotFoundError } from '../../platform/errors/errors';
import type { ServiceContext } from '../../platform/service-context';
import { amountOf as money, fromCents } from '../../platform/money/money';
import { uuidArraySql, uuidList } from '../../platform/database/uuid';
import { ownedBy } from '../../platform/database/tenancy';

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

interface AmountPercent {
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

/** Counters are integers (numbers), amounts bigint cents and percentages numeric (strings). */
export interface ProjectStatsRow {
  id: string;
  answered: number;
  may_answer: number;
  declined: number;
  contractors: number;
  tender_documents: number;
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

/**
 * Stats of the templates `ids` of the organizations `organizationIds`: their maintained row
 * (Migration20261220000000_statistics), with the retained offer's sub_total and discount subtracted here.
 * Each id is looked up by primary key (`offset 0` keeps the planner from hashing the whole table instead:
 * 400 templates of a dashboard in 2.4 ms rather than 12 here, at 1x and at 100x alike).
 */
const TEMPLATE_STATS_COLUMNS = `ts.template_id as id,
    coalesce(ts.retained_sub_total - ts.retained_discount - ts.budget, 0) as delta_budget,
    ts.contractors, ts.answers, ts.pending, ts.declined, ts.in_revision, ts.intention_no, ts.intention_maybe`;
const templateStatsSql = (ids: readonly string[], organizationIds: readonly string[]) => `
  select ${TEMPLATE_STATS_COLUMNS}
  from unnest(${uuidArraySql(ids)}) as i(id)
  cross join lateral (select * from template_statistics ts where ts.template_id = i.id offset 0) ts
  cross join lateral (select p.organization_id from project p where p.id = ts.project_id offset 0) p
  where ${ownedBy('p.organization_id', organizationIds)}`;

/** The same figures as templateStatsSql for every template of the projects `projectIds` of the organizations. */
const projectTemplateStatsSql = (projectIds: readonly string[], organizationIds: readonly string[]) => `
  select ${TEMPLATE_STATS_COLUMNS}
  from template_statistics ts
  join project p on p.id = ts.project_id
  where ts.project_id = any(${uuidArraySql(projectIds)}) and ${ownedBy('p.organization_id', organizationIds)}`;

function templateStatsViews(rows: TemplateStatsRow[]): Map<string, TemplateStatsView> {
  const out = new Map<string, TemplateStatsView>();
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
 * Statistics of the projects `ids` of the organizations `organizationIds`, one row per visible project: its
 * maintained row, found by organization (every project has one, with its organization). Amounts are answered in
 * cents and read as decimals in JavaScript (fromCents); percentages are computed here on the sums made numeric
 * with two decimals again, the very values and scales the sums of numeric(14,2) amounts had, then rounded once,
 * as before.
 */
export const projectStatisticsSql = (ids: readonly string[], organizationIds: readonly string[]) => `
  select ps.project_id as id,
    coalesce(ps.answered, 0) as answered, coalesce(ps.may_answer, 0) as may_answer,
    coalesce(ps.declined, 0) as declined, coalesce(ps.contractors, 0) as contractors,
    coalesce(ps.tender_documents, 0) as tender_documents,
    coalesce(ps.total_cents, 0) as total,
    coalesce(ps.simulated_cost_cents, 0) as simulated_cost,
    coalesce(ps.anticipated_trades_cents, 0) as anticipated_trades,
    coalesce(ps.anticipated_offers_cents, 0) as anticipated_offers,
    coalesce(ps.to_assign_cents, 0) as to_assign,
    coalesce(ps.simulated_cost_cents - ps.total_cents, 0) as deviation,
    coalesce(round((ps.to_assign_cents * 0.01) * 100 / nullif(ps.total_cents * 0.01, 0), 2), 0) as to_assign_percent,
    coalesce(round(((ps.simulated_cost_cents - ps.total_cents) * 0.01) * 100 / nullif(ps.total_cents * 0.01, 0), 2), 0) as deviation_percent
  from project_statistics ps
  join unnest(${uuidArraySql(ids)}) as i(id) on i.id = ps.project_id
  where ${ownedBy('ps.organization_id', organizationIds)}`;

/** A row of PROJECT_STATISTICS_SQL as the service answers it. */
export function projectStatisticsView(r: ProjectStatsRow): ProjectStatisticsView {
  return {
    answered: int(r.answered),
    mayAnswer: int(r.may_answer),
    declined: int(r.declined),
    contractors: int(r.contractors),
    tenderDocuments: int(r.tender_documents),
    budgets: {
      total: fromCents(r.total),
      simulatedCost: fromCents(r.simulated_cost),
      totalAnticipatedTrades: fromCents(r.anticipated_trades),
      totalAnticipatedOffers: fromCents(r.anticipated_offers),
      budgetTradesToAssign: { value: fromCents(r.to_assign), percent: money(r.to_assign_percent) },
      projectDeviation: { value: fromCents(r.deviation), percent: money(r.deviation_percent) },
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
    if (ids.length === 0) return new Map();
    return templateStatsViews(await this.sc.em.execute<TemplateStatsRow[]>(templateStatsSql(ids, this.organizations())));
  }

  /**
   * Stats of every template and slice of many projects, in one statement, keyed by template id: read at the same
   * time as the templates themselves (GraphQL's levels read ahead). Projects the caller may not see are absent.
   */
  async templateStatsByProject(projectIds: readonly string[]): Promise<Map<string, TemplateStatsView>> {
    const ids = uuidList(projectIds);
    if (ids.length === 0) return new Map();
    return templateStatsViews(await this.sc.em.execute<TemplateStatsRow[]>(projectTemplateStatsSql(ids, this.organizations())));
  }

  /**
   * Statistics of many projects at once, in one statement, keyed by (lowercase) project id. Projects the
   * caller may not see, or that do not exist, are absent. Archived projects are included.
   */
  async projectStatistics(projectIds: readonly string[]): Promise<Map<string, ProjectStatisticsView>> {
    const ids = uuidList(projectIds);
    const out = new Map<string, ProjectStatisticsView>();
    if (ids.length === 0) return out;
    const rows = await this.sc.em.execute<ProjectStatsRow[]>(projectStatisticsSql(ids, this.organizations()));
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
