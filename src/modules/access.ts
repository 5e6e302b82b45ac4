import { inOrganizations } from '../platform/database/tenancy';
import { ConflictError, NotFoundError } from '../platform/errors/errors';
import { Project } from './projects/project.entity';
import type { ServiceContext } from '../platform/service-context';

/**
 * Tenancy in one place: every lookup by id goes through the caller's Administrator organizations, so an
 * id from elsewhere answers exactly like an unknown one.
 */
export async function visibleProject(sc: ServiceContext, projectId: string): Promise<Project> {
  const project = await sc.em.findOne(Project, { id: projectId, organization: inOrganizations(sc.caller.adminOrganizationIds) });
  if (!project) throw new NotFoundError('Project not found');
  return project;
}

/** A project that may be written to: visible and not archived (409 otherwise). */
export async function writableProject(sc: ServiceContext, projectId: string): Promise<Project> {
  const project = await visibleProject(sc, projectId);
  assertWritable(project);
  return project;
}

export const ARCHIVED = 'The project is archived: it is read-only';

function assertWritable(project: Project): void {
  if (project.archivedAt) throw new ConflictError(ARCHIVED);
}

/** Whether the caller may see data of this organization (UUIDs compare case-insensitively). */
export function canSeeOrganization(sc: ServiceContext, organizationId: string): boolean {
  return sc.caller.adminOrganizationIds.includes(organizationId.toLowerCase());
}
