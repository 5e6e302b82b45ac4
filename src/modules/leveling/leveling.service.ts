import { NotFoundError } from '../../platform/errors/errors';
import { visibleProject } from '../access';
import type {
  LevelingCell, LevelingColumn, LevelingEntry, LevelingRow, ProjectLeveling, TemplateLeveling,
} from './leveling.output';
import type { ServiceContext } from '../../platform/service-context';
import { lotName } from '../templates/template.service';
import { uuidArraySql, uuidList } from '../../platform/database/uuid';
import { ownedBy } from '../../platform/database/tenancy';
import { belowMedian, halve, meanOf, medianOf, percentOf, thresholdOf } from './leveling-figures';
import { cents, money, moneyNumeric } from '../../platform/money/money';
import { percent, sub, toNumber, type Numeric } from '../../platform/money/pg-numeric';
import { parseTimestamp } from '../../platform/values/time';

/** What the leveling reads: projects by id and by one of their templates, within the caller's organizations. */
interface Asked {
  projectIds: readonly string[];
  templateIds: readonly string[];
  organizationIds: readonly string[];
}

/** The projects `projectIds` and the projects of the templates `templateIds`, each limited to the organizations. */
const projectsSql = ({ projectIds, templateIds, organizationIds }: Asked) => `
    select p.id as project_id, p.name as project_name, p.scopes ->> 'currency' as currency, p.archived_at is not null as archived
    from project p where p.id = any(${uuidArraySql(projectIds)}) and ${ownedBy('p.organization_id', organizationIds)}
    union
    select p.id, p.name, p.scopes ->> 'currency', p.archived_at is not null
    from template t join project p on p.id = t.project_id
    where t.id = any(${uuidArraySql(templateIds)}) and ${ownedBy('p.organization_id', organizationIds)}`;

/**
 * The lots (templates and slices) of the projects and the templates asked for, in each project's order (trade
 * number, each template before its slices); a project without lots gives one row without a lot.
 */
const lotsSql = (asked: Asked) => `
  with p as (${projectsSql(asked)})
  select p.*, t.id as template_id, t.budget, t.is_slice, t.slice_name, t.selected_consultation_id,
    tr.id as trade_id, tr.number as trade_number, tr.name as trade_name
  from p
  left join template t on t.project_id = p.project_id
    and (t.project_id = any(${uuidArraySql(asked.projectIds)}) or t.id = any(${uuidArraySql(asked.templateIds)}))
  left join project_trade tr on tr.id = t.trade_id
  order by p.project_id, tr.number, tr.created_at, tr.id, t.is_slice, t.created_at, t.id`;

/**
 * The documents of the same lots, each lot's in the leveling's order: offers from the lowest (ties by
 * contractor name, then invitation), then the documents without one, by invitation (docs/leveling.md). The state and offer are the rows the
 * statistics triggers keep (Migration20261220000000_statistics and Migration20261231000000_statistics_offer_version).
 */
const documentsSql = ({ projectIds, templateIds, organizationIds }: Asked) => `
  select ds.template_id, ds.document_id, ds.contractor_id, c.name as contractor_name, ds.state, ds.intention,
    ds.offer_sub_total as sub_total, ds.offer_discount as discount, ds.offer_version as version,
    ds.offer_sent_at as sent_at
  from document_statistics ds
  join contractor c on c.id = ds.contractor_id
  join document d on d.id = ds.document_id
  where ds.template_id in (
    select t.id from template t join project p on p.id = t.project_id
    where (t.project_id = any(${uuidArraySql(projectIds)}) or t.id = any(${uuidArraySql(templateIds)}))
      and ${ownedBy('p.organization_id', organizationIds)})
  order by ds.template_id, ds.offer_sub_total - ds.offer_discount nulls last,
    case when ds.offer_sub_total is not null then c.name end, d.created_at, ds.document_id`;

/** pg answers numeric and bigint as strings. */
type Num = string | null;

interface LotRow {
  project_id: string;
  project_name: string;
  currency: string | null;
  archived: boolean;
  template_id: string | null;
  trade_id: string;
  trade_number: string;
  trade_name: string;
  is_slice: boolean;
  slice_name: string | null;
  selected_consultation_id: string | null;
  budget: string;
}

interface OfferRow {
  template_id: string;
  document_id: string;
  contractor_id: string;
  contractor_name: string;
  state: string;
  intention: string | null;
  sub_total: Num;
  discount: Num;
  version: number | null;
  /** PostgreSQL's text, to the microsecond. */
  sent_at: string | null;
}

/** A lot's figures the project sums, in cents; null without offers. */
interface LotSums {
  budget: number;
  lowest: number | null;
  retained: number | null;
}

const deviation = (value: number, of: number) => ({ value: money(value - of), percent: percentOf(value - of, of, () => [sub(moneyNumeric(value), moneyNumeric(of)), moneyNumeric(of)]) });

/**
 * A lot's leveling from its lot row and its documents in order (offers first, from the lowest), with the
 * figures the project sums. Figures are computed on exact integers as PostgreSQL computes them from the
 * numerics (./leveling-figures, docs/leveling.md): each rounded once where the SQL expressions round; the
 * median of an even count is the mean of the two middle offers, kept exact for the comparisons and deviations.
 */
function lotOf(r: LotRow, rows: readonly OfferRow[], threshold: ReturnType<typeof thresholdOf>, thresholdValue: number): { lot: TemplateLeveling; sums: LotSums } {
  const budget = cents(r.budget);
  const amounts: number[] = [];
  for (const d of rows) if (d.sub_total !== null) amounts.push(cents(d.sub_total) - cents(d.discount!));
  const offers = amounts.length;
  const lowest = offers ? amounts[0] : null;
  const highest = offers ? amounts[offers - 1] : null;
  const median = offers ? medianOf(amounts) : null;
  const selectedAt = r.selected_consultation_id === null ? -1 : rows.findIndex((d) => d.document_id === r.selected_consultation_id);
  const selectedOffered = selectedAt >= 0 && selectedAt < offers;
  const retained = selectedOffered ? amounts[selectedAt] : lowest;
  let abnormallyLow = 0;
  let rank = 0;
  const documents = rows.map((d, i): LevelingEntry => {
    const selected = d.document_id === r.selected_consultation_id;
    if (i >= offers) {
      return {
        documentId: d.document_id, contractorId: d.contractor_id, contractorName: d.contractor_name, state: d.state, intention: d.intention,
        offer: null, rank: null, deviationFromBudget: null, deviationFromLowest: null, deviationFromMedian: null,
        lowest: false, retained: false, selected, abnormallyLow: false,
      };
    }
    const amount = amounts[i];
    // Ranks as rank() gives them: equal offers share the rank of the first of them.
    if (i === 0 || amounts[i - 1] !== amount) rank = i + 1;
    const low = belowMedian(amount, median!, threshold);
    if (low) abnormallyLow++;
    const m = median!.halfCents;
    return {
      documentId: d.document_id, contractorId: d.contractor_id, contractorName: d.contractor_name, state: d.state, intention: d.intention,
      offer: {
        version: d.version!, sentAt: d.sent_at === null ? null : parseTimestamp(d.sent_at),
        subTotal: Number(d.sub_total), discount: Number(d.discount), amount: money(amount),
      },
      rank,
      deviationFromBudget: deviation(amount, budget),
      deviationFromLowest: deviation(amount, lowest!),
      deviationFromMedian: {
        value: money(halve(2 * amount - m)),
        percent: percentOf(2 * amount - m, m, () => {
          const med = median!.exact();
          return [sub(moneyNumeric(amount), med), med];
        }),
      },
      lowest: amount === lowest,
      retained: selectedOffered ? i === selectedAt : amount === lowest,
      selected,
      abnormallyLow: low,
    };
  });
  const lot: TemplateLeveling = {
    templateId: r.template_id!,
    name: lotName(r.trade_name, r.is_slice ? r.slice_name : null),
    tradeId: r.trade_id,
    tradeNumber: r.trade_number,
    isSlice: r.is_slice,
    slice: r.is_slice ? r.slice_name : null,
    selectedConsultationId: r.selected_consultation_id,
    abnormallyLowBelowMedianPercent: thresholdValue,
    summary: {
      documents: rows.length,
      offers,
      lowest: lowest === null ? null : money(lowest),
      highest: highest === null ? null : money(highest),
      median: median && money(halve(median.halfCents)),
      mean: offers ? meanOf(amounts) : null,
      spread: lowest === null ? null : deviation(highest!, lowest),
      budget: money(budget),
      retained: retained === null ? null : money(retained),
      retainedDeviation: retained === null ? null : deviation(retained, budget),
      abnormallyLow,
    },
    documents,
  };
  return { lot, sums: { budget, lowest, retained } };
}

/** `coalesce(sum(x), 0)` of cents, exactly whatever their number (BigInt), as a numeric(…,2). */
const sumOf = (values: readonly number[]): Numeric => ({ v: values.reduce((s, c) => s + BigInt(c), 0n), scale: 2 });
const totalDeviation = (value: Numeric, of: Numeric) => {
  const d = sub(value, of);
  return { value: toNumber(d), percent: toNumber(percent(d, of)) };
};

/** A project's totals from its lots' sums (decisions.md section 5: the retained offer, else nothing). */
function totalsOf(sums: readonly LotSums[]): ProjectLeveling['totals'] {
  const offered = sums.filter((s) => s.lowest !== null);
  const budget = sumOf(sums.map((s) => s.budget));
  const lowest = sumOf(offered.map((s) => s.lowest!));
  const retained = sumOf(offered.map((s) => s.retained!));
  return {
    lots: sums.length,
    lotsWithOffers: offered.length,
    budget: toNumber(budget),
    offeredLotsBudget: toNumber(sumOf(offered.map((s) => s.budget))),
    lowest: toNumber(lowest),
    lowestDeviation: totalDeviation(lowest, budget),
    retained: toNumber(retained),
    retainedDeviation: totalDeviation(retained, budget),
  };
}

/** The contractors who made an offer on the lots, each once, by name: the matrix's columns. */
function columnsOf(lots: readonly TemplateLeveling[]): LevelingColumn[] {
  const columns = new Map<string, LevelingColumn>();
  for (const lot of lots) {
    for (const d of lot.documents) if (d.offer) columns.set(d.contractorId, { contractorId: d.contractorId, contractorName: d.contractorName });
  }
  return [...columns.values()].sort((a, b) => a.contractorName.localeCompare(b.contractorName, 'fr') || (a.contractorId < b.contractorId ? -1 : 1));
}

/** One row per lot, one cell per column. */
function matrixOf(lots: readonly TemplateLeveling[], contractors: readonly LevelingColumn[]): LevelingRow[] {
  return lots.map((lot) => {
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
}

/**
 * A project's leveling from its lots. The columns and the matrix (a cell per lot and contractor: ~60% of the
 * objects of a leveling) are built when first read: a GraphQL query that selects neither, as a dashboard
 * asking for the lots and sums does, never builds them; REST and the spreadsheet read them.
 */
function projectOf(first: LotRow, lots: TemplateLeveling[], totals: ProjectLeveling['totals'], threshold: number): ProjectLeveling {
  let contractors: LevelingColumn[] | undefined;
  let matrix: LevelingRow[] | undefined;
  return {
    projectId: first.project_id,
    name: first.project_name,
    currency: first.currency,
    archived: first.archived,
    abnormallyLowBelowMedianPercent: threshold,
    lots,
    get contractors() {
      return (contractors ??= columnsOf(lots));
    },
    get matrix() {
      return (matrix ??= matrixOf(lots, this.contractors));
    },
    totals,
    lotsWithoutOffers: lots.filter((l) => l.summary.offers === 0)
      .map((l) => ({ templateId: l.templateId, name: l.name, budget: l.summary.budget, documents: l.summary.documents })),
  };
}

/**
 * Bid leveling (issue 13, docs/leveling.md): each lot's offers side by side, ranked, against the budget, the
 * lowest and the median offer, with the abnormally low ones flagged; per project, the lots × contractors
 * matrix and the sums against the budget. Two narrow statements for any number of projects or lots (the lots,
 * the documents), limited to the caller's Administrator organizations; archived projects included. The
 * figures are computed here rather than in SQL: one wide row per document with the lot's and project's
 * columns repeated cost ~3.6 s for 1,000 projects, the two statements and the figures in node ~0.7 s
 * (docs/benchmarks.md, leveling).
 */
export class LevelingService {
  constructor(private readonly sc: ServiceContext) {}

  /** Levelings of many projects at once, by (lowercase) project id; projects the caller may not see are absent. */
  async projects(projectIds: readonly string[], threshold: number): Promise<Map<string, ProjectLeveling>> {
    const ids = uuidList(projectIds);
    const out = new Map<string, ProjectLeveling>();
    if (ids.length === 0) return out;
    for (const { first, lots, totals } of await this.read(ids, [], threshold)) out.set(first.project_id, projectOf(first, lots, totals, threshold));
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

  /**
   * The projects asked for (by id, or by one of their templates), each with the lots asked for, in order,
   * from two statements; a project's totals are sums over its lots.
   */
  private async read(projectIds: string[], templateIds: string[], thresholdValue: number) {
    const asked: Asked = { projectIds, templateIds, organizationIds: uuidList(this.sc.caller.adminOrganizationIds) };
    // One after the other: side by side they hold two of the pool's connections and measured no faster.
    const lotRows = await this.sc.em.execute<LotRow[]>(lotsSql(asked));
    const documentRows = await this.sc.em.execute<OfferRow[]>(documentsSql(asked));
    const byLot = new Map<string, OfferRow[]>();
    for (const d of documentRows) {
      const rows = byLot.get(d.template_id);
      if (rows) rows.push(d);
      else byLot.set(d.template_id, [d]);
    }
    const threshold = thresholdOf(thresholdValue);
    const projects: Array<{ first: LotRow; lots: TemplateLeveling[]; totals: ProjectLeveling['totals'] }> = [];
    let i = 0;
    while (i < lotRows.length) {
      const first = lotRows[i];
      const lots: TemplateLeveling[] = [];
      const sums: LotSums[] = [];
      for (; i < lotRows.length && lotRows[i].project_id === first.project_id; i++) {
        const r = lotRows[i];
        if (r.template_id === null) continue;
        const { lot, sums: lotSums } = lotOf(r, byLot.get(r.template_id) ?? [], threshold, thresholdValue);
        lots.push(lot);
        sums.push(lotSums);
      }
      projects.push({ first, lots, totals: totalsOf(sums) });
    }
    return projects;
  }
}
