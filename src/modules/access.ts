import { inOrganizations } from '../platform/database/tenancy';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../platform/errors/errors';
import { Project } from './entities';
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

const ARCHIVED = 'The project is archived: it is read-only';

export function assertWritable(project: Project): void {
  if (project.archivedAt) throw new ConflictError(ARCHIVED);
}

/**
 * Key space of the per-project advisory locks (first key of PostgreSQL's two-key form; the second is the
 * project id hashed). Two projects sharing a hash only wait for each other a little longer.
 */
export const PROJECT_LOCKS = 0x5052_4a00;

/**
 * First statements of every write below a project, inside its transaction: a transaction-scoped shared
 * advisory lock on the project, then its row. Writes run side by side; an archive (archiveLock) waits
 * for those in flight, and writes that arrive after it asked queue behind it: PostgreSQL grants
 * heavyweight locks in order, whereas share row locks join the current holders and starve an archive
 * under steady writes. The row is read by a second statement, whose snapshot is taken once the lock is
 * held: a write that waited for an archive sees it and is refused (409), leaving nothing.
 */
export async function holdWritable(em: EntityManager, projectId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock_shared(?, hashtext(?))', [PROJECT_LOCKS, projectId]);
  const rows = await em.execute<Array<{ archived_at: Date | null }>>('select archived_at from project where id = ?', [projectId]);
  if (!rows.length) throw new NotFoundError('Project not found');
  if (rows[0].archived_at) throw new ConflictError(ARCHIVED);
}

/**
 * The archive's side of holdWritable: an exclusive lock on the project, granted once the writes in flight
 * have committed and before any write that arrives later. Held until the archive's transaction ends.
 */
export async function archiveLock(em: EntityManager, projectId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?, hashtext(?))', [PROJECT_LOCKS, projectId]);
}

/** Whether the caller may see data of this organization (UUIDs compare case-insensitively). */
export function canSeeOrganization(sc: ServiceContext, organizationId: string): boolean {
  return sc.caller.adminOrganizationIds.includes(organizationId.toLowerCase());
}
