import type { Time } from '../../platform/values/time';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../../platform/database/tenancy';
import { NotFoundError, ValidationError, type FieldError } from '../../platform/errors/errors';
import { Membership } from '../organizations/membership.entity';
import { ProjectManager } from './pivots.entity';
import { Project, type ConstructionType, type ProjectOptionalDates, type ProjectScopes, type ProjectSiteAddress, type ResponseType } from './project.entity';
import { ProjectTrade } from '../trades/project-trade.entity';
import { TradeList } from '../trades/trade-list.entity';
import { canSeeOrganization, visibleProject } from '../access';
import { archiveLock } from '../project-locks';
import type { CreateProjectInput } from './project.input';
import { dayOf } from '../../platform/validation/rules';
import { keysetPage, type Page } from '../../platform/database/pagination';
import type { ServiceContext } from '../../platform/service-context';
import { groupUnder } from '../../platform/database/batch';
import { USER_COLUMNS, userFromRow, type UserRow, type UserView } from '../organizations/organization.service';
import { rowTime, type PgTimestamp } from '../../platform/database/rows';
import { uuidArraySql, uuidList } from '../../platform/database/uuid';

interface ManagerView {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
}

export interface ProjectView {
  id: string;
  legacyId: string;
  name: string;
  organizationId: string;
  constructionType: ConstructionType;
  managers: ManagerView[];
  tradeListId: string;
  responseType: ResponseType;
  endOfOfferDate: string | null;
  endWorksConstruction: string | null;
  commencementWorksConstruction: string | null;
  tendersClosingActivated: boolean;
  publishedOnMarketplace: boolean;
  scopes: { currency: string | null; vat: number; prorate: number | null; levels: number | null } | null;
  siteAddress: { number: number | null; zipCode: number | null } | null;
  optionalDates: { noc: string | null; responsesOpeningDate: string | null } | null;
  archived: boolean;
  archivedAt: Time | null;
  createdAt: Time;
  updatedAt: Time;
}

export interface ProjectListOptions {
  organizationId?: string | null;
  archived?: boolean;
  first?: number | null;
  after?: string | null;
  /** Name of the cursor field in errors (REST says `cursor`, GraphQL `after`). */
  afterField?: string;
  /** false: the total of a paged list is not asked for (no count statement). */
  count?: boolean;
}

/** A project's own fields; `managers` are filled by views(). */
export type ProjectFields = Omit<ProjectView, 'managers'>;

/** The JSON columns as the record shows them: every key present, null when absent. */
function jsonFields(scopes?: ProjectScopes | null, siteAddress?: ProjectSiteAddress | null, optionalDates?: ProjectOptionalDates | null) {
  return {
    scopes: scopes ? { currency: scopes.currency ?? null, vat: scopes.vat, prorate: scopes.prorate ?? null, levels: scopes.levels ?? null } : null,
    siteAddress: siteAddress ? { number: siteAddress.number ?? null, zipCode: siteAddress.zipCode ?? null } : null,
    optionalDates: optionalDates ? { noc: optionalDates.noc ?? null, responsesOpeningDate: optionalDates.responsesOpeningDate ?? null } : null,
  };
}

interface ProjectRow {
  id: string;
  legacy_id: string;
  name: string;
  organization_id: string;
  construction_type: ConstructionType;
  trade_list_id: string;
  response_type: ResponseType;
  end_of_offer_date: string | null;
  end_works_construction: string | null;
  commencement_works_construction: string | null;
  tenders_closing_activated: boolean;
  published_on_marketplace: boolean;
  scopes: ProjectScopes | null;
  site_address: ProjectSiteAddress | null;
  optional_dates: ProjectOptionalDates | null;
  archived_at: PgTimestamp;
  created_at: PgTimestamp;
  updated_at: PgTimestamp;
}

const PROJECT_COLUMNS = `p.id, p.legacy_id, p.name, p.organization_id, p.construction_type, p.trade_list_id, p.response_type,
  p.end_of_offer_date, p.end_works_construction, p.commencement_works_construction, p.tenders_closing_activated,
  p.published_on_marketplace, p.scopes, p.site_address, p.optional_dates, p.archived_at, p.created_at, p.updated_at`;

/** A project's own fields from its row (reads: no entity, nothing for the unit of work to track). */
function projectFromRow(em: EntityManager, r: ProjectRow): ProjectFields {
  const archivedAt = rowTime(r.archived_at);
  return {
    id: r.id,
    legacyId: r.legacy_id,
    name: r.name,
    organizationId: r.organization_id,
    constructionType: r.construction_type,
    tradeListId: r.trade_list_id,
    responseType: r.response_type,
    endOfOfferDate: r.end_of_offer_date,
    endWorksConstruction: r.end_works_construction,
    commencementWorksConstruction: r.commencement_works_construction,
    tendersClosingActivated: r.tenders_closing_activated,
    publishedOnMarketplace: r.published_on_marketplace,
    ...jsonFields(r.scopes, r.site_address, r.optional_dates),
    archived: archivedAt !== null,
    archivedAt,
    createdAt: rowTime(r.created_at!),
    updatedAt: rowTime(r.updated_at!),
  };
}

/** Projects of the caller's organizations: list, read, create (copying the trade list), archive. */
export class ProjectService {
  constructor(private readonly sc: ServiceContext) {}

  /** Managers of many projects in one statement, by project id, as user records. */
  async managersByProject(projectIds: readonly string[]): Promise<Map<string, UserView[]>> {
    const ids = uuidList(projectIds);
    const rows = ids.length
      ? await this.sc.em.execute<Array<UserRow & { project_id: string }>>(`
        select pm.project_id, ${USER_COLUMNS}
        from project_manager pm join app_user u on u.id = pm.user_id
        where pm.project_id = any(${uuidArraySql(ids)})
        order by u.last_name, u.first_name, u.id`)
      : [];
    return groupUnder(projectIds, rows, (r) => r.project_id, userFromRow);
  }

  /** Full views of projects: two statements whatever their number. */
  async views(projects: ProjectFields[]): Promise<ProjectView[]> {
    const managers = await this.managersByProject(projects.map((p) => p.id));
    const manager = ({ id, firstName, lastName, email }: UserView): ManagerView => ({ id, firstName, lastName, email });
    return projects.map((p) => ({ ...p, managers: (managers.get(p.id) ?? []).map(manager) }));
  }

  /** Projects of the caller's organizations by id, in one statement; ids the caller may not see are absent. */
  async fieldsByIds(projectIds: readonly string[]): Promise<Map<string, ProjectFields>> {
    const ids = uuidList(projectIds);
    const orgs = uuidList(this.sc.caller.adminOrganizationIds);
    if (!ids.length || !orgs.length) return new Map();
    const rows = await this.sc.em.execute<ProjectRow[]>(`select ${PROJECT_COLUMNS} from project p
      where p.id = any(${uuidArraySql(ids)}) and ${ownedBy('p.organization_id', orgs)}`);
    return new Map(rows.map((r) => [r.id, projectFromRow(this.sc.em, r)]));
  }

  /**
   * #1: projects of the caller's organizations, newest first; archived ones only with `archived`. The total of
   * a paged list is counted unless `count` is false.
   */
  async list(opts: ProjectListOptions = {}): Promise<Page<ProjectFields>> {
    let orgIds = this.sc.caller.adminOrganizationIds;
    if (opts.organizationId) {
      if (!canSeeOrganization(this.sc, opts.organizationId)) throw new NotFoundError('Organization not found');
      orgIds = [opts.organizationId.toLowerCase()];
    }
    const orgs = uuidList(orgIds);
    if (!orgs.length) return { items: [], totalCount: opts.first && opts.count === false ? null : 0, hasNextPage: false, endCursor: null };
    return keysetPage(this.sc.em, {
      columns: PROJECT_COLUMNS,
      from: 'project p',
      alias: 'p',
      where: `${ownedBy('p.organization_id', orgs)} and p.archived_at is ${opts.archived ? 'not null' : 'null'}`,
      params: [],
      map: (r: ProjectRow) => projectFromRow(this.sc.em, r),
    }, { first: opts.first, after: opts.after, afterField: opts.afterField ?? 'after', order: 'desc', count: opts.count !== false });
  }

  /** #3: a project of the caller's organizations; 404 otherwise. What a write answers too, read back by the one mapper. */
  async get(projectId: string): Promise<ProjectFields> {
    const fields = (await this.fieldsByIds([projectId])).get(projectId.toLowerCase());
    if (!fields) throw new NotFoundError('Project not found');
    return fields;
  }

  /** #2: creates the project with its managers and a copy of the trade list's trades, in one transaction. */
  async create(input: CreateProjectInput): Promise<Project> {
    const organizationId = (input.organizationId ?? this.sc.caller.currentOrganizationId).toLowerCase();
    if (!canSeeOrganization(this.sc, organizationId)) {
      throw new ValidationError([{ field: 'organizationId', message: 'is not an organization where you are Administrator' }]);
    }
    const errors: FieldError[] = [];
    const tradeList = await this.sc.em.findOne(TradeList, {
      id: input.tradeListId,
      $or: [{ organization: null }, { organization: organizationId }],
    }, { populate: ['trades'] });
    if (!tradeList) errors.push({ field: 'tradeListId', message: 'is not a trade list available to the organization' });
    const managerIds = input.managers.map((m) => m.id.toLowerCase());
    const members = await this.sc.em.find(Membership, { user: { $in: managerIds }, organization: organizationId });
    const memberIds = new Set(members.map((m) => m.user.id));
    managerIds.forEach((id, i) => {
      if (!memberIds.has(id)) errors.push({ field: `managers.${i}.id`, message: 'is not a user of the organization' });
    });
    if (errors.length) throw new ValidationError(errors);

    return this.sc.em.transactional(async (em) => {
      const project = em.create(Project, {
        organization: organizationId,
        name: input.name,
        constructionType: input.constructionType as ConstructionType,
        tradeList: tradeList!,
        responseType: input.responseType as ResponseType,
        endOfOfferDate: input.endOfOfferDate ? dayOf(input.endOfOfferDate) : null,
        endWorksConstruction: input.endWorksConstruction ? dayOf(input.endWorksConstruction) : null,
        commencementWorksConstruction: input.commencementWorksConstruction ? dayOf(input.commencementWorksConstruction) : null,
        tendersClosingActivated: input.tendersClosingActivated ?? false,
        publishedOnMarketplace: input.publishedOnMarketplace ?? false,
        scopes: input.scopes
          ? { currency: (input.scopes.currency ?? null) as never, vat: input.scopes.vat, prorate: input.scopes.prorate ?? null, levels: input.scopes.levels ?? null }
          : null,
        siteAddress: input.siteAddress ? { number: input.siteAddress.number ?? null, zipCode: input.siteAddress.zipCode ?? null } : null,
        optionalDates: input.optionalDates
          ? {
            noc: input.optionalDates.noc ? dayOf(input.optionalDates.noc) : null,
            responsesOpeningDate: input.optionalDates.responsesOpeningDate ? dayOf(input.optionalDates.responsesOpeningDate) : null,
          }
          : null,
      });
      for (const id of new Set(managerIds)) em.create(ProjectManager, { project, user: id });
      const trades = [...tradeList!.trades].sort((a, b) => a.number.localeCompare(b.number));
      for (const t of trades) {
        em.create(ProjectTrade, { project, number: t.number, name: t.name, shortName: t.shortName, sourceTrade: t });
      }
      await em.flush();
      return project;
    });
  }

  /** #4: marks the project archived; archiving twice changes nothing (the first `archived_at` stays). */
  async archive(projectId: string): Promise<Project> {
    return this.sc.em.transactional(async (em) => {
      const project = await visibleProject({ ...this.sc, em }, projectId);
      if (!project.archivedAt) {
        // The time is taken once every write in flight has committed (archiveLock waits for them), so no
        // row below the project is created after `archived_at`. Conditional, so that two concurrent
        // archives keep the first time.
        await archiveLock(em, project.id);
        const now = new Date();
        await em.nativeUpdate(Project, { id: project.id, archivedAt: null }, { archivedAt: now, updatedAt: now });
        await em.refresh(project);
      }
      return project;
    });
  }
}
