import { NotFoundError } from '../errors';
import { visibleProject } from './access';
import type {
  LevelingCell, LevelingColumn, LevelingEntry, LevelingRow, LevelingSummary, ProjectLeveling, TemplateLeveling,
} from './outputs/leveling.output';
import type { ServiceContext } from './service-context';
import { lotName } from './template.service';
import { uuidList } from './uuid';

/** `coalesce(round(a * 100 / b, 2), 0)`: a percent of b, 0 when b is 0 (decisions.md section 5). */
const pct = (a: string, b: string) => `coalesce(round((${a}) * 100 / nullif(${b}, 0), 2), 0)`;

/**
 * The leveling of the lots (templates and slices) of the projects `array[?]` and of the templates `array[?]`,
 * limited to the organizations `array[?]`, with the threshold `?` (a percent), in one statement whatever the
 * number of projects, lots and offers. A project is answered with only the lots it was asked for: all of them
 * when asked by project id.
 *
 * A document's state and offer (the sub_total and discount of its latest ANSWERED version), and a lot's
 * retained offer, are the rows the statistics triggers keep (Migration20261220000000_statistics), with the
 * number and sending time of the offer's version (Migration20261231000000_statistics_offer_version).
 * Every figure is computed on exact numerics and rounded once, as PostgreSQL rounds numerics (half away
 * from zero); the median of an even count is the mean of the two middle offers, kept exact for comparisons.
 *
 * One row per (project, lot, document), built by left joins: a lot without documents and a project without lots
 * still give one row. Ranks and the lot's figures are computed over narrow (lot, document, amount) rows and
 * joined to the lots once, by hash (docs/benchmarks.md, leveling).
 */
const LEVELING_SQL = `
  with p as (
    select p.id as project_id, p.name as project_name, p.scopes ->> 'currency' as currency, p.archived_at is not null as archived
    from project p where p.id = any(array[?]::uuid[]) and p.organization_id = any(array[?]::uuid[])
    union
    select p.id, p.name, p.scopes ->> 'currency', p.archived_at is not null
    from template t join project p on p.id = t.project_id
    where t.id = any(array[?]::uuid[]) and p.organization_id = any(array[?]::uuid[])
  ),
  -- A project without lots, and a lot without documents, each keep one row (left joins): nothing joins back.
  lot as (
    select p.*, t.id as template_id, t.budget, t.is_slice, t.slice_name, t.selected_consultation_id,
      tr.id as trade_id, tr.number as trade_number, tr.name as trade_name,
      ts.retained_sub_total - ts.retained_discount as retained,
      row_number() over (partition by p.project_id
        order by tr.number, tr.created_at, tr.id, t.is_slice, t.created_at, t.id) as position
    from p
    left join template t on t.project_id = p.project_id and (t.project_id = any(array[?]::uuid[]) or t.id = any(array[?]::uuid[]))
    left join project_trade tr on tr.id = t.trade_id
    left join template_statistics ts on ts.template_id = t.id
  ),
  -- Narrow rows for the windows and groups (the wide lot columns are joined once, at the end, by hash).
  doc as (
    select ds.template_id, ds.document_id, ds.offer_sub_total - ds.offer_discount as amount
    from document_statistics ds where ds.template_id in (select lot.template_id from lot)
  ),
  ranked as (
    select doc.*,
      case when doc.amount is not null then rank() over (partition by doc.template_id order by doc.amount) end as rank,
      row_number() over (partition by doc.template_id order by doc.amount) as n
    from doc
  ),
  -- The lot's figures in one grouped pass; the median (of an even count, the mean of the two middle offers)
  -- from the offers' positions, exact.
  agg as (
    select r.template_id, count(r.document_id) as documents, count(r.amount) as offers,
      min(r.amount) as lowest, max(r.amount) as highest, avg(r.amount) as mean
    from ranked r group by r.template_id
  ),
  med as (
    select r.template_id, avg(r.amount) as median
    from ranked r join agg a on a.template_id = r.template_id
    where r.n in ((a.offers + 1) / 2, (a.offers + 2) / 2) and r.amount is not null
    group by r.template_id
  ),
  f as (
    select lot.*, coalesce(a.documents, 0) as documents, coalesce(a.offers, 0) as offers, a.lowest, a.highest, a.mean, m.median,
      ds.document_id, ds.contractor_id, c.name as contractor_name, ds.state, ds.intention,
      ds.offer_sub_total as sub_total, ds.offer_discount as discount, ds.offer_version as version, ds.offer_sent_at as sent_at,
      r.amount, r.rank, d.created_at as invited_at,
      coalesce(so.amount is not null, false) as selected_offered
    from lot
    left join agg a on a.template_id = lot.template_id
    left join med m on m.template_id = lot.template_id
    left join ranked r on r.template_id = lot.template_id
    left join document_statistics ds on ds.document_id = r.document_id
    left join document d on d.id = r.document_id
    left join contractor c on c.id = ds.contractor_id
    left join doc so on so.document_id = lot.selected_consultation_id and so.template_id = lot.template_id
  ),
  tot as (
    select lot.project_id, count(lot.template_id) as lots, count(a.lowest) as lots_with_offers,
      coalesce(sum(lot.budget), 0) as budget, coalesce(sum(lot.budget) filter (where a.lowest is not null), 0) as offered_budget,
      coalesce(sum(a.lowest), 0) as lowest, coalesce(sum(lot.retained), 0) as retained
    from lot left join agg a on a.template_id = lot.template_id
    group by lot.project_id
  )
  select f.project_id, f.project_name, f.currency, f.archived,
    tot.lots, tot.lots_with_offers, tot.budget as total_budget, tot.offered_budget, tot.lowest as total_lowest,
    tot.lowest - tot.budget as total_lowest_deviation, ${pct('tot.lowest - tot.budget', 'tot.budget')} as total_lowest_deviation_percent,
    tot.retained as total_retained,
    tot.retained - tot.budget as total_retained_deviation, ${pct('tot.retained - tot.budget', 'tot.budget')} as total_retained_deviation_percent,
    f.template_id, f.trade_id, f.trade_number, f.trade_name, f.is_slice, f.slice_name, f.selected_consultation_id,
    f.budget, f.documents, f.offers, f.lowest, f.highest, round(f.median, 2) as median, round(f.mean, 2) as mean,
    f.highest - f.lowest as spread, ${pct('f.highest - f.lowest', 'f.lowest')} as spread_percent,
    f.retained, f.retained - f.budget as retained_deviation, ${pct('f.retained - f.budget', 'f.budget')} as retained_deviation_percent,
    f.document_id, f.contractor_id, f.contractor_name, f.state, f.intention,
    f.version, extract(epoch from f.sent_at) * 1000 as sent_at_ms, f.sub_total, f.discount, f.amount, f.rank,
    f.amount - f.budget as budget_deviation, ${pct('f.amount - f.budget', 'f.budget')} as budget_deviation_percent,
    f.amount - f.lowest as lowest_deviation, ${pct('f.amount - f.lowest', 'f.lowest')} as lowest_deviation_percent,
    round(f.amount - f.median, 2) as median_deviation, ${pct('f.amount - f.median', 'f.median')} as median_deviation_percent,
    coalesce(f.amount = f.lowest, false) as is_lowest,
    coalesce(f.amount is not null and case when f.selected_offered then f.document_id = f.selected_consultation_id
      else f.amount = f.lowest end, false) as is_retained,
    coalesce(f.document_id = f.selected_consultation_id, false) as is_selected,
    coalesce(f.median > 0 and (f.median - f.amount) * 100 > ?::numeric * f.median, false) as is_abnormally_low
  from f
  join tot on tot.project_id = f.project_id
  order by f.project_id, f.position, f.amount is null, f.amount, f.contractor_name, f.invited_at, f.document_id`;

/** pg answers numeric and bigint as strings. */
type Num = string | null;

interface LevelingRowData {
  project_id: string;
  project_name: string;
  currency: string | null;
  archived: boolean;
  lots: Num;
  lots_with_offers: Num;
  total_budget: Num;
  offered_budget: Num;
  total_lowest: Num;
  total_lowest_deviation: Num;
  total_lowest_deviation_percent: Num;
  total_retained: Num;
  total_retained_deviation: Num;
  total_retained_deviation_percent: Num;
  template_id: string | null;
  trade_id: string;
  trade_number: string;
  trade_name: string;
  is_slice: boolean;
  slice_name: string | null;
  selected_consultation_id: string | null;
  budget: string;
  documents: string;
  offers: string;
  lowest: Num;
  highest: Num;
  median: Num;
  mean: Num;
  spread: Num;
  spread_percent: Num;
  retained: Num;
  retained_deviation: Num;
  retained_deviation_percent: Num;
  document_id: string | null;
  contractor_id: string;
  contractor_name: string;
  state: string;
  intention: string | null;
  version: number | null;
  sent_at_ms: Num;
  sub_total: Num;
  discount: Num;
  amount: Num;
  rank: Num;
  budget_deviation: Num;
  budget_deviation_percent: Num;
  lowest_deviation: Num;
  lowest_deviation_percent: Num;
  median_deviation: Num;
  median_deviation_percent: Num;
  is_lowest: boolean;
  is_retained: boolean;
  is_selected: boolean;
  is_abnormally_low: boolean;
}

/**
 * A numeric as the JSON number it is sent as. Values are exact with at most 2 decimals already (money is
 * numeric(14,2), the rest rounded in SQL): the nearest double prints as those digits.
 */
const num = (s: Num): number => Number(s ?? 0);
const numOrNull = (s: Num): number | null => (s === null ? null : Number(s));
const amountPercent = (value: Num, percent: Num) => (value === null ? null : { value: num(value), percent: num(percent) });

function entryOf(r: LevelingRowData): LevelingEntry {
  const offered = r.amount !== null;
  return {
    documentId: r.document_id!,
    contractorId: r.contractor_id,
    contractorName: r.contractor_name,
    state: r.state,
    intention: r.intention,
    offer: offered ? { version: r.version!, sentAt: r.sent_at_ms === null ? null : new Date(Number(r.sent_at_ms)), subTotal: num(r.sub_total), discount: num(r.discount), amount: num(r.amount) } : null,
    rank: offered ? num(r.rank) : null,
    deviationFromBudget: offered ? amountPercent(r.budget_deviation, r.budget_deviation_percent) : null,
    deviationFromLowest: offered ? amountPercent(r.lowest_deviation, r.lowest_deviation_percent) : null,
    deviationFromMedian: offered ? amountPercent(r.median_deviation, r.median_deviation_percent) : null,
    lowest: r.is_lowest,
    retained: r.is_retained,
    selected: r.is_selected,
    abnormallyLow: r.is_abnormally_low,
  };
}

function summaryOf(r: LevelingRowData): LevelingSummary {
  return {
    documents: num(r.documents),
    offers: num(r.offers),
    lowest: numOrNull(r.lowest),
    highest: numOrNull(r.highest),
    median: numOrNull(r.median),
    mean: numOrNull(r.mean),
    spread: amountPercent(r.spread, r.spread_percent),
    budget: num(r.budget),
    retained: numOrNull(r.retained),
    retainedDeviation: amountPercent(r.retained_deviation, r.retained_deviation_percent),
    abnormallyLow: 0,
  };
}

function lotOf(r: LevelingRowData, threshold: number): TemplateLeveling {
  return {
    templateId: r.template_id!,
    name: lotName(r.trade_name, r.is_slice ? r.slice_name : null),
    tradeId: r.trade_id,
    tradeNumber: r.trade_number,
    isSlice: r.is_slice,
    slice: r.is_slice ? r.slice_name : null,
    selectedConsultationId: r.selected_consultation_id,
    abnormallyLowBelowMedianPercent: threshold,
    summary: summaryOf(r),
    documents: [],
  };
}

/** A project's leveling from its lots: the matrix, with each contractor who made an offer as one column. */
function projectOf(first: LevelingRowData, lots: TemplateLeveling[], threshold: number): ProjectLeveling {
  const columns = new Map<string, LevelingColumn>();
  for (const lot of lots) {
    for (const d of lot.documents) if (d.offer) columns.set(d.contractorId, { contractorId: d.contractorId, contractorName: d.contractorName });
  }
  const contractors = [...columns.values()].sort((a, b) => a.contractorName.localeCompare(b.contractorName, 'fr') || (a.contractorId < b.contractorId ? -1 : 1));
  const matrix: LevelingRow[] = lots.map((lot) => {
    const byContractor = new Map(lot.documents.map((d) => [d.contractorId, d]));
    const cells: LevelingCell[] = contractors.map(({ contractorId }) => {
      const d = byContractor.get(contractorId);
      return {
        contractorId,
        documentId: d?.documentId ?? null,
        state: d?.state ?? null,
        amount: d?.offer?.amount ?? null,
        rank: d?.rank ?? null,
        lowest: d?.lowest ?? false,
        retained: d?.retained ?? false,
        abnormallyLow: d?.abnormallyLow ?? false,
      };
    });
    return { templateId: lot.templateId, name: lot.name, budget: lot.summary.budget, lowest: lot.summary.lowest, retained: lot.summary.retained, cells };
  });
  return {
    projectId: first.project_id,
    name: first.project_name,
    currency: first.currency,
    archived: first.archived,
    abnormallyLowBelowMedianPercent: threshold,
    lots,
    contractors,
    matrix,
    totals: {
      lots: num(first.lots),
      lotsWithOffers: num(first.lots_with_offers),
      budget: num(first.total_budget),
      offeredLotsBudget: num(first.offered_budget),
      lowest: num(first.total_lowest),
      lowestDeviation: { value: num(first.total_lowest_deviation), percent: num(first.total_lowest_deviation_percent) },
      retained: num(first.total_retained),
      retainedDeviation: { value: num(first.total_retained_deviation), percent: num(first.total_retained_deviation_percent) },
    },
    lotsWithoutOffers: lots.filter((l) => l.summary.offers === 0)
      .map((l) => ({ templateId: l.templateId, name: l.name, budget: l.summary.budget, documents: l.summary.documents })),
  };
}

/**
 * Bid leveling (issue 13, docs/leveling.md): each lot's offers side by side, ranked, against the budget, the
 * lowest and the median offer, with the abnormally low ones flagged; per project, the lots × contractors
 * matrix and the sums against the budget. One statement for any number of projects or lots, limited to the
 * caller's Administrator organizations; archived projects included.
 */
export class LevelingService {
  constructor(private readonly sc: ServiceContext) {}

  /** Levelings of many projects at once, by (lowercase) project id; projects the caller may not see are absent. */
  async projects(projectIds: readonly string[], threshold: number): Promise<Map<string, ProjectLeveling>> {
    const ids = uuidList(projectIds);
    const out = new Map<string, ProjectLeveling>();
    if (ids.length === 0) return out;
    for (const { first, lots } of await this.read(ids, [], threshold)) out.set(first.project_id, projectOf(first, lots, threshold));
    return out;
  }

  /** Levelings of many lots (templates or slices) at once, by (lowercase) template id; absent when not visible. */
  async templates(templateIds: readonly string[], threshold: number): Promise<Map<string, TemplateLeveling>> {
    const ids = uuidList(templateIds);
    const out = new Map<string, TemplateLeveling>();
    if (ids.length === 0) return out;
    for (const { lots } of await this.read([], ids, threshold)) for (const lot of lots) out.set(lot.templateId, lot);
    return out;
  }

  /** The leveling of a project; 404 when the caller may not see it. */
  async ofProject(projectId: string, threshold: number): Promise<ProjectLeveling> {
    const leveling = (await this.projects([projectId], threshold)).get(projectId.toLowerCase());
    if (!leveling) throw new NotFoundError('Project not found');
    return leveling;
  }

  /** The leveling of a template or slice of a project; 404 for a project the caller may not see, then for a template not of it. */
  async ofTemplate(projectId: string, templateId: string, threshold: number): Promise<TemplateLeveling> {
    const projects = await this.read([], uuidList([templateId]), threshold);
    const lot = projects.find((p) => p.first.project_id === projectId.toLowerCase())?.lots[0];
    if (lot) return lot;
    await visibleProject(this.sc, projectId);
    throw new NotFoundError('Template not found');
  }

  /** The statement's rows grouped by project, then lot, in order. */
  private async read(projectIds: string[], templateIds: string[], threshold: number) {
    const organizations = uuidList(this.sc.caller.adminOrganizationIds);
    const rows = await this.sc.em.execute<LevelingRowData[]>(LEVELING_SQL, [
      projectIds, organizations, templateIds, organizations, projectIds, templateIds, String(threshold),
    ]);
    const projects: Array<{ first: LevelingRowData; lots: TemplateLeveling[] }> = [];
    let lot: TemplateLeveling | null = null;
    for (const r of rows) {
      let project = projects[projects.length - 1];
      if (!project || project.first.project_id !== r.project_id) {
        project = { first: r, lots: [] };
        projects.push(project);
        lot = null;
      }
      if (r.template_id === null) continue;
      if (!lot || lot.templateId !== r.template_id) {
        lot = lotOf(r, threshold);
        project.lots.push(lot);
      }
      if (r.document_id !== null) {
        const entry = entryOf(r);
        lot.documents.push(entry);
        if (entry.abnormallyLow) lot.summary.abnormallyLow++;
      }
    }
    return projects;
  }
}
