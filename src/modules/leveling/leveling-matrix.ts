import type { LevelingCell, LevelingColumn, LevelingRow, ProjectLeveling, TemplateLeveling } from './leveling.output';
import type { LotRow } from './leveling-sql';

// How a project's leveling is presented: its contractors as columns, its lots as rows of cells.

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
export function projectOf(first: LotRow, lots: TemplateLeveling[], totals: ProjectLeveling['totals'], threshold: number): ProjectLeveling {
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
