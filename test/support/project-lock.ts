import { Client } from 'pg';
import { PROJECT_LOCKS } from '../../src/modules/project-locks';

/**
 * The project's write lock held from a client of the test's own, as an archive holds it (src/modules/access.ts): a
 * write below the project then waits in the database until `release`.
 */
export async function holdProjectWrites(databaseUrl: string, projectId: string): Promise<{ waiter(): Promise<void>; release(): Promise<void> }> {
  const holder = new Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query('begin');
  await holder.query('select pg_advisory_xact_lock($1, hashtext($2))', [PROJECT_LOCKS, projectId]);
  let released: Promise<void> | null = null;
  return {
    /** Resolves once a session of the database waits on a lock. */
    async waiter() {
      for (let i = 0; i < 200; i++) {
        const { rows } = await holder.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`);
        if (rows[0].n >= 1) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('no session waited on the lock');
    },
    /** Ends the lock's transaction (once, however often called). */
    release() {
      released ??= holder.query('commit').then(() => undefined, () => undefined).then(() => holder.end());
      return released;
    },
  };
}
