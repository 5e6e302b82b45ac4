import type { EmbeddedCluster } from '../../src/platform/database/embedded';
import type { PgBouncer } from './pgbouncer';
import { adminQuery, dropDatabase } from './databases';

/** Drops every database this run created and stops the embedded test cluster. */
export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.TEST_SERVER_URL!;
  const prefix = process.env.TEST_RUN_PREFIX!;
  const rows = await adminQuery<{ datname: string }>(serverUrl, 'select datname from pg_database where starts_with(datname, $1)', [prefix]);
  for (const { datname } of rows) await dropDatabase(serverUrl, datname);
  await ((globalThis as Record<string, unknown>).__TEST_POOLER__ as PgBouncer | undefined)?.stop();
  const cluster = (globalThis as Record<string, unknown>).__TEST_CLUSTER__ as EmbeddedCluster | undefined;
  await cluster?.stop();
}
