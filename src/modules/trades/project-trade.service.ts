import { inOrganizations } from '../../platform/database/tenancy';
import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import { ConflictError, NotFoundError } from '../../platform/errors/errors';
import { Project, ProjectTrade, Template } from '../entities';
import { holdWritable, visibleProject } from '../access';
import type { CreateProjectTradeInput, UpdateProjectTradeInput } from './project-trade.input';
import type { ServiceContext } from '../../platform/service-context';
import { groupUnder } from '../../platform/database/batch';

export interface ProjectTradeView {
  id: string;
  number: string;
  name: string;
  shortName: string;
  comment: string | null;
  projectId: string;
  createdAt: Date;
  updatedAt: Date;
}

export const projectTradeView = (t: ProjectTrade): ProjectTradeView => ({
  id: t.id,
  number: t.number,
  name: t.name,
  shortName: t.shortName,
  comment: t.comment ?? null,
  projectId: t.project.id,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
});

// Lot numbers are zero-padded strings ("02"); ties keep the order of creation.
const TRADE_ORDER = { number: 'asc', createdAt: 'asc', id: 'asc' } as const;

const IN_USE = 'The trade still has templates: delete them first';

/** Trades (lots) of a project: list, add, update, delete. An archived project's trades are read-only. */
export class ProjectTradeService {
  constructor(private readonly sc: ServiceContext) {}

  /** #6: the trades of a visible project, by number. */
  async list(projectId: string): Promise<ProjectTradeView[]> {
    const project = await visibleProject(this.sc, projectId);
    const trades = await this.sc.em.find(ProjectTrade, { project }, { orderBy: TRADE_ORDER });
    return trades.map(projectTradeView);
  }

  /**
   * Trades of many projects in one statement, by project id (for DataLoaders). Projects the caller may
   * not see get an empty list.
   */
  async tradesByProject(projectIds: readonly string[]): Promise<Map<string, ProjectTradeView[]>> {
    const trades = projectIds.length
      ? await this.sc.em.find(ProjectTrade, {
        project: { id: { $in: [...projectIds] }, organization: inOrganizations(this.sc.caller.adminOrganizationIds) },
      }, { orderBy: TRADE_ORDER })
      : [];
    return groupUnder(projectIds, trades, (t) => t.project.id, projectTradeView);
  }

  /** #7 */
  async create(projectId: string, input: CreateProjectTradeInput): Promise<ProjectTradeView> {
    return this.sc.em.transactional(async (em) => {
      const project = await visibleProject({ ...this.sc, em }, projectId);
      await holdWritable(em, project.id);
      const trade = em.create(ProjectTrade, { project, number: input.number, name: input.name, shortName: input.shortName, comment: null });
      await em.flush();
      return projectTradeView(trade);
    });
  }

  /** #8: replaces name, number and short name; `comment` only when sent. */
  async update(projectId: string, tradeId: string, input: UpdateProjectTradeInput): Promise<ProjectTradeView> {
    return this.sc.em.transactional(async (em) => {
      const { project, trade } = await this.find(em, projectId, tradeId);
      await holdWritable(em, project.id);
      trade.name = input.name;
      trade.number = input.number;
      trade.shortName = input.shortName;
      if (input.comment !== undefined) trade.comment = input.comment;
      await em.flush();
      return projectTradeView(trade);
    });
  }

  /** #9: refused (409) while templates of the trade exist. Answers the ids of the trade and its project. */
  async delete(projectId: string, tradeId: string): Promise<{ projectId: string; tradeId: string }> {
    try {
      return await this.sc.em.transactional(async (em) => {
        const { project, trade } = await this.find(em, projectId, tradeId);
        await holdWritable(em, project.id);
        if (await em.count(Template, { trade })) throw new ConflictError(IN_USE);
        const deleted = { projectId: project.id, tradeId: trade.id };
        em.remove(trade);
        await em.flush();
        return deleted;
      });
    } catch (err) {
      // A template created between the count and the delete: the foreign key refuses the delete.
      if (err instanceof ForeignKeyConstraintViolationException) throw new ConflictError(IN_USE);
      throw err;
    }
  }

  /** A trade of a visible project; a trade of another project is unknown here (404). */
  private async find(em: ServiceContext['em'], projectId: string, tradeId: string): Promise<{ project: Project; trade: ProjectTrade }> {
    const project = await visibleProject({ ...this.sc, em }, projectId);
    const trade = await em.findOne(ProjectTrade, { id: tradeId, project });
    if (!trade) throw new NotFoundError('Trade not found');
    return { project, trade };
  }
}
