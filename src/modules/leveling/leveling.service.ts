import { NotFoundError } from '../../platform/errors/errors';
import { visibleProject } from '../access';
import type { ProjectLeveling, TemplateLeveling } from './leveling.output';
import type { ServiceContext } from '../../platform/service-context';
import { uuidList } from '../../platform/database/uuid';
import { thresholdOf } from './leveling-figures';
import { documentsSql, lotsSql, type Asked, type LotRow, type OfferRow } from './leveling-sql';
import { lotOf, totalsOf, type LotSums } from './leveling-lots';
import { projectOf } from './leveling-matrix';

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
