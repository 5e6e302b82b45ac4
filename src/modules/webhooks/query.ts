import type { Pool } from 'pg';

// How webhook delivery (the loop, the endpoints' health, the housekeeping) runs its statements: on the delivery's
// own pool (src/app.ts), never the requests' one, and written with `?` placeholders, numbered here in the order of
// their arguments.

export type Query = <T>(statement: string, params?: unknown[]) => Promise<T[]>;

/** Every question mark is taken for a placeholder: the statements hold no other (no jsonb `?`, none in a comment). */
export function queryOn(pool: Pool): Query {
  return async <T>(statement: string, params: unknown[] = []): Promise<T[]> => {
    let n = 0;
    return (await pool.query(statement.replace(/\?/g, () => `$${++n}`), params)).rows as T[];
  };
}
