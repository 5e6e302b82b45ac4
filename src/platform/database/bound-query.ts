import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * Runs a statement whose parameters the server binds ($1, $2, ... of the extended protocol), in `em`'s transaction
 * when it is in one. For every statement that carries a secret (a webhook's signing secret, the download URLs' key).
 *
 * `em.execute` cannot: MikroORM writes the parameters into the statement's text on the client (its platform's
 * `formatQuery`) and sends that text alone, so that every value shows in pg_stat_activity, in the server's statement
 * logs (log_statement, log_min_duration_statement, auto_explain) and in the message of an error that quotes the
 * statement. knex sends a raw statement with its bindings as they are (`?` numbered `$n`), and an error's message names
 * the placeholders, not the values (`compileSqlOnError: false`, orm-config.ts).
 *
 * Written with `?` placeholders like `em.execute`; `??` and `\?` mean something else to knex: a statement holds neither.
 */
export async function boundQuery<T>(em: EntityManager, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  const runner = em.getTransactionContext<Knex.Transaction>() ?? em.getConnection().getKnex();
  const result = await runner.raw<{ rows: T[] }>(sql, params as Knex.RawBinding[]);
  return result.rows;
}
