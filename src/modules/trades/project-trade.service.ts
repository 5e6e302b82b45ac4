import type { Time } from '../../platform/values/time';
import { ownedBy } from '../../platform/database/tenancy';
import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import { ConflictError, NotFoundError } from '../../platform/errors/errors';
import { Project } from '../projects/project.entity';
import { Template } from '../templates/template.entity';
import { ProjectTrade } from './project-trade.entity';
import { visibleProject } from '../access';
import { holdWritable } from '../project-locks';
import type { CreateProjectTradeInput, UpdateProjectTradeInput } from './project-trade.input';
import type { ServiceContext } from '../../platform/service-context';
import { groupUnder } from '../../platform/database/batch';
import { rowTime, type PgTimestamp } from '../../platform/database/rows';
import { uuidArraySql, uuidList } from '../../platform/database/uuid';

export interface ProjectTradeView {
  id: string;
  number: string;
  name: string;
  shortName: string;
  comment: string | null;
  projectId: string;
  createdAt: Time;
  updatedAt: Time;
}

/** A trade as a write's entity holds it. */
const projectTradeView = (t: ProjectTrade): ProjectTradeView => ({
  id: t.id,
  number: t.number,
  name: t.name,
  shortName: t.shortName,
  comment: t.comment ?? null,
  projectId: t.project.id,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
});

interface ProjectTradeRow {
  id: string;
  project_id: string;
  number: string;
  name: string;
  short_name: string;
  comment: string | null;
  created_at: PgTimestamp;
  updated_at: PgTimestamp;
}

/** Trades `pt` (reads: rows, no entity, nothing for the unit of work to track). */
const TRADE_COLUMNS = 'pt.id, pt.project_id, pt.number, pt.name, pt.short_name, pt.comment, pt.created_at, pt.updated_at';
// Lot numbers are zero-padded strings ("02"); ties keep the order of creation.
const TRADE_ORDER_SQL = 'pt.number, pt.created_at, pt.id';

/** A trade as a read's row holds it. */
const projectTradeFromRow = (r: ProjectTradeRow): ProjectTradeView => ({
  id: r.id,
  number: r.number,
  name: r.name,
  shortName: r.short_name,
  comment: r.comment,
  projectId: r.project_id,
  createdAt: rowTime(r.created_at!),
  updatedAt: rowTime(r.updated_at!),
});

const IN_USE = 'The trade still has templates: delete them first';

/** Trades (lots) of a project: list, add, update, delete. An archived project's trades are read-only. */
export class ProjectTradeService {
  constructor(private readonly sc: ServiceContext) {}

  /** #6: the trades of a visible project, by number. */
  async list(projectId: string): Promise<ProjectTradeView[]> {
    const project = await visibleProject(this.sc, projectId);
    const rows = await this.sc.em.execute<ProjectTradeRow[]>(`select ${TRADE_COLUMNS} from project_trade pt
      where pt.project_id = ? order by ${TRADE_ORDER_SQL}`, [project.id]);
    return rows.map(projectTradeFromRow);
  }

  /**
   * Trades of many projects in one statement, by project id (for DataLoaders). Projects the caller may
   * not see get an empty list.
   */
  async tradesByProject(projectIds: readonly string[]): Promise<Map<string, ProjectTradeView[]>> {
    const ids = uuidList(projectIds);
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    const rows = ids.length && orgs.length
      ? await this.sc.em.execute<ProjectTradeRow[]>(`select ${TRADE_COLUMNS} from project_trade pt join project p on p.id = pt.project_id
        where pt.project_id = any(${uuidArraySql(ids)}) and ${ownedBy('p.organization_id', orgs)}
        order by pt.project_id, ${TRADE_ORDER_SQL}`)
      : [];
    return groupUnder(projectIds, rows, (r) => r.project_id, projectTradeFromRow);
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
