import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../errors';
import { Project } from '../entities';
import type { ServiceContext } from './service-context';

/**
 * Tenancy in one place: every lookup by id goes through the caller's Administrator organizations, so an
 * id from elsewhere answers exactly like an unknown one.
 */
export async function visibleProject(sc: ServiceContext, projectId: string): Promise<Project> {
  const project = await sc.em.findOne(Project, { id: projectId, organization: { $in: sc.caller.adminOrganizationIds } });
  if (!project) throw new NotFoundError('Project not found');
  return project;
}

/** A project that may be written to: visible and not archived (409 otherwise). */
export async function writableProject(sc: ServiceContext, projectId: string): Promise<Project> {
  const project = await visibleProject(sc, projectId);
  assertWritable(project);
  return project;
}

const ARCHIVED = 'The project is archived: it is read-only';

export function assertWritable(project: Project): void {
  if (project.archivedAt) throw new ConflictError(ARCHIVED);
}

/**
 * First statement of every write below a project, inside its transaction: a share lock on the project row
 * makes a concurrent archive wait until this write commits, and a project archived meanwhile is refused.
 */
export async function holdWritable(em: EntityManager, projectId: string): Promise<void> {
  const rows = await em.execute<Array<{ archived_at: Date | null }>>('select archived_at from project where id = ? for share', [projectId]);
  if (!rows.length) throw new NotFoundError('Project not found');
  if (rows[0].archived_at) throw new ConflictError(ARCHIVED);
}

/** Whether the caller may see data of this organization (UUIDs compare case-insensitively). */
export function canSeeOrganization(sc: ServiceContext, organizationId: string): boolean {
  return sc.caller.adminOrganizationIds.includes(organizationId.toLowerCase());
}
