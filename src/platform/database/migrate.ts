import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import type { Logger } from 'pino';
import { ormConfig, type DataModel } from './orm-config';

/** First key of the migrations' advisory lock (PostgreSQL's two-key form; project locks use another space). */
export const MIGRATION_LOCK = 0x4d49_4752;

/**
 * Migrations are applied with none of the request pool's bounds (a migration may rightly run long), whatever
 * defaults the role or database has, and without JIT: SET LOCAL, so that it holds through any pooler as well.
 */
const UNBOUNDED = "SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL jit = 'off'";

/** Migrations of this build not recorded in the database's `mikro_orm_migrations` (all of them when it has none). */
export async function pendingMigrations(model: DataModel, url: string): Promise<string[]> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(`select name from mikro_orm_migrations`).catch((err: { code?: string }) => {
      if (err.code === '42P01') return { rows: [] };
      throw err;
    });
    const applied = new Set(rows.map((r) => r.name.replace(/\.[jt]s$/, '')));
    return model.migrations.map((m) => m.name).filter((name) => !applied.has(name));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Applies pending migrations, once however many instances start together. The migrations' transaction takes one
 * advisory lock first: the others wait for it before they look at the migrations (the migrator's table check
 * and creation included, which run beside that transaction), then find nothing to do. The lock is
 * transaction-scoped: it lives exactly as long as the migrations it guards, and holds through a pooler too.
 * Resolves to the names applied.
 */
export async function migrate(model: DataModel, url: string, log?: Logger): Promise<string[]> {
  const orm = await MikroORM.init(ormConfig(model, url));
  try {
    const connection = orm.em.getConnection();
    return await connection.transactional(async (trx) => {
      await connection.execute(UNBOUNDED, [], 'run', trx);
      const [{ locked }] = await connection.execute<Array<{ locked: boolean }>>('select pg_try_advisory_xact_lock(?, 0) as locked', [MIGRATION_LOCK], 'all', trx);
      if (!locked) {
        log?.info('migrations: another instance is applying them; waiting for it');
        await connection.execute('select pg_advisory_xact_lock(?, 0)', [MIGRATION_LOCK], 'all', trx);
      }
      const applied = await orm.getMigrator().up({ transaction: trx });
      return applied.map((m) => m.name);
    });
  } finally {
    await orm.close(true);
  }
}

