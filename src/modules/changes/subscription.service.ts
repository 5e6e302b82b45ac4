import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../../platform/database/tenancy';
import { NotFoundError, ValidationError } from '../../platform/errors/errors';
import type { ServiceContext } from '../../platform/service-context';
import { isUuid, uuidArraySql, uuidList } from '../../platform/database/uuid';

/** Most projects one `projectChanged` subscription may name (leave the argument out for all of them). */
const MAX_WATCHED_PROJECTS = 100;

/** What a subscription watches, once checked: projects of the caller's organizations, or one template. */
export type Watch =
  | { kind: 'projects'; projectIds: ReadonlySet<string> | null }
  | { kind: 'template'; templateId: string; projectId: string };

/**
 * The rules of a subscription's start: what a caller may watch. An id the caller may not see answers as an
 * unknown one (NOT_FOUND), as every query does; nothing is registered then, so no event ever reaches them.
 * Every event is checked again when it is delivered (src/modules/changes/feed.ts).
 */
export class SubscriptionService {
  constructor(private readonly sc: ServiceContext) {}

  /** `projectChanged(projectIds)`: the named projects (each visible), or every project of the caller's organizations. */
  async watchProjects(projectIds: readonly string[] | null | undefined): Promise<Watch> {
    if (projectIds === null || projectIds === undefined) return { kind: 'projects', projectIds: null };
    const malformed = projectIds.findIndex((id) => !isUuid(id));
    if (malformed >= 0) throw new ValidationError([{ field: `projectIds.${malformed}`, message: 'must be a UUID' }]);
    const ids = uuidList(projectIds);
    if (ids.length === 0) throw new ValidationError([{ field: 'projectIds', message: 'must name at least one project; leave it out for every project' }]);
    if (ids.length > MAX_WATCHED_PROJECTS) throw new ValidationError([{ field: 'projectIds', message: `must name at most ${MAX_WATCHED_PROJECTS} projects; leave it out for every project` }]);
    const rows = await this.sc.em.execute<Array<{ id: string }>>(
      `select id from project where id = any(${uuidArraySql(ids)}) and ${ownedBy('organization_id', uuidList(this.sc.caller.adminOrganizationIds))}`,
    );
    const visible = new Set(rows.map((r) => r.id));
    const missing = ids.find((id) => !visible.has(id));
    if (missing) throw new NotFoundError('Project not found');
    return { kind: 'projects', projectIds: visible };
  }

  /** `templateChanged(templateId)`: a template or slice of a project of the caller's organizations. */
  async watchTemplate(templateId: string): Promise<Watch> {
    if (!isUuid(templateId)) throw new ValidationError([{ field: 'templateId', message: 'must be a UUID' }]);
    const [row] = await this.sc.em.execute<Array<{ id: string; project_id: string }>>(
      `select t.id, t.project_id from template t join project p on p.id = t.project_id
       where t.id = ? and ${ownedBy('p.organization_id', uuidList(this.sc.caller.adminOrganizationIds))}`,
      [templateId.toLowerCase()],
    );
    if (!row) throw new NotFoundError('Template not found');
    return { kind: 'template', templateId: row.id, projectId: row.project_id };
  }
}

/**
 * The projects of some organizations and some projects by id, with their organization, in one statement: what
 * a resync reports to subscribers after the listener missed notifications.
 */
export async function projectsForResync(em: EntityManager, organizationIds: readonly string[], projectIds: readonly string[]): Promise<Array<{ id: string; organizationId: string }>> {
  const orgs = uuidList(organizationIds);
  const ids = uuidList(projectIds);
  if (!orgs.length && !ids.length) return [];
  const rows = await em.execute<Array<{ id: string; organization_id: string }>>(
    `select id, organization_id from project where ${ownedBy('organization_id', orgs)} or id = any(${uuidArraySql(ids)})`,
  );
  return rows.map((r) => ({ id: r.id, organizationId: r.organization_id }));
}
