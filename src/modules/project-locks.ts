import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../platform/errors/errors';
import { ARCHIVED } from './access';

// The project write locks: apart from the tenancy checks of access.ts (who may see a record), these order writes
// and archives of one project.

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
