import type { FilterQuery } from '@mikro-orm/core';
import { NotFoundError, ValidationError, type FieldError } from '../errors';
import { Membership, Project, ProjectManager, ProjectTrade, TradeList, User, type ConstructionType, type ResponseType } from '../entities';
import { archiveLock, canSeeOrganization, visibleProject } from './access';
import type { CreateProjectInput } from './inputs/project.input';
import { dayOf } from './inputs/rules';
import { keysetPage, type Page } from './pagination';
import type { ServiceContext } from './service-context';
import { groupUnder } from './batch';
import { userView, type UserView } from './organization.service';
import { uuidList } from './uuid';

export interface ManagerView {
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
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ProjectListOptions {
  organizationId?: string | null;
  archived?: boolean;
  first?: number | null;
  after?: string | null;
  /** Name of the cursor field in errors (REST says `cursor`, GraphQL `after`). */
  afterField?: string;
}

/** A project's own fields; `managers` are filled by views(). */
export function projectFields(p: Project): Omit<ProjectView, 'managers'> {
  return {
    id: p.id,
    legacyId: p.legacyId,
    name: p.name,
    organizationId: p.organization.id,
    constructionType: p.constructionType,
    tradeListId: p.tradeList.id,
    responseType: p.responseType,
    endOfOfferDate: p.endOfOfferDate ?? null,
    endWorksConstruction: p.endWorksConstruction ?? null,
    commencementWorksConstruction: p.commencementWorksConstruction ?? null,
    tendersClosingActivated: p.tendersClosingActivated,
    publishedOnMarketplace: p.publishedOnMarketplace,
    scopes: p.scopes ? { currency: p.scopes.currency ?? null, vat: p.scopes.vat, prorate: p.scopes.prorate ?? null, levels: p.scopes.levels ?? null } : null,
    siteAddress: p.siteAddress ? { number: p.siteAddress.number ?? null, zipCode: p.siteAddress.zipCode ?? null } : null,
    optionalDates: p.optionalDates ? { noc: p.optionalDates.noc ?? null, responsesOpeningDate: p.optionalDates.responsesOpeningDate ?? null } : null,
    archived: !!p.archivedAt,
    archivedAt: p.archivedAt ?? null,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

/** Projects of the caller's organizations: list, read, create (copying the trade list), archive. */
export class ProjectService {
  constructor(private readonly sc: ServiceContext) {}

  /** Managers of many projects in one statement, by project id, as user records. */
  async managersByProject(projectIds: readonly string[]): Promise<Map<string, UserView[]>> {
    const rows = projectIds.length
      ? await this.sc.em.find(ProjectManager, { project: { $in: [...projectIds] } }, { populate: ['user'], orderBy: { user: { lastName: 'asc', firstName: 'asc' } } })
      : [];
    return groupUnder(projectIds, rows, (r) => r.project.id, ({ user }) => userView(user as User));
  }

  /** Full views of projects: two statements whatever their number. */
  async views(projects: Project[]): Promise<ProjectView[]> {
    const managers = await this.managersByProject(projects.map((p) => p.id));
    const manager = ({ id, firstName, lastName, email }: UserView): ManagerView => ({ id, firstName, lastName, email });
    return projects.map((p) => ({ ...projectFields(p), managers: (managers.get(p.id) ?? []).map(manager) }));
  }

  /** Projects of the caller's organizations by id, in one statement; ids the caller may not see are absent. */
  async fieldsByIds(projectIds: readonly string[]): Promise<Map<string, Omit<ProjectView, 'managers'>>> {
    const ids = uuidList(projectIds);
    const rows = ids.length ? await this.sc.em.find(Project, { id: { $in: ids }, organization: { $in: this.sc.caller.adminOrganizationIds } }) : [];
    return new Map(rows.map((p) => [p.id, projectFields(p)]));
  }

  /** #1: projects of the caller's organizations, newest first; archived ones only with `archived`. */
  async list(opts: ProjectListOptions = {}): Promise<Page<Project>> {
    let orgIds = this.sc.caller.adminOrganizationIds;
    if (opts.organizationId) {
      if (!canSeeOrganization(this.sc, opts.organizationId)) throw new NotFoundError('Organization not found');
      orgIds = [opts.organizationId.toLowerCase()];
    }
    const where: FilterQuery<Project> = { organization: { $in: orgIds }, archivedAt: opts.archived ? { $ne: null } : null };
    return keysetPage(this.sc.em, Project, where, { first: opts.first, after: opts.after, afterField: opts.afterField ?? 'after', order: 'desc' });
  }

  /** #3 */
  get(projectId: string): Promise<Project> {
    return visibleProject(this.sc, projectId);
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
