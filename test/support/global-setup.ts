import 'reflect-metadata';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../mikro-orm.config';
import { withDatabase } from '../../src/platform/database/admin';
import { startEmbeddedCluster } from '../../src/platform/database/embedded';
import { loadDemoData } from '../../src/seed/demo-data';
import { RUN_DB_PREFIX, adminQuery, sweepOldRunDatabases } from './databases';
import { startPgBouncer } from './pgbouncer';
import { freePort } from './ports';

/**
 * Once per test run: pick the PostgreSQL server (DATABASE_URL's, else an embedded test cluster), build a
 * template database with the migrations and the demo data, and tell the workers where it is.
 */
export default async function globalSetup(): Promise<void> {
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const cluster = await startEmbeddedCluster({
      dataDir: path.resolve(__dirname, '../../.data/test-pg'),
      port: process.env.TEST_EMBEDDED_PG_PORT ? Number(process.env.TEST_EMBEDDED_PG_PORT) : await freePort(),
      fast: true,
    });
    (globalThis as Record<string, unknown>).__TEST_CLUSTER__ = cluster;
    serverUrl = cluster.serverUrl;
  }
  await sweepOldRunDatabases(serverUrl);
  const runPrefix = `${RUN_DB_PREFIX}${Math.floor(Date.now() / 1000)}_${process.pid}_`;
  const template = `${runPrefix}template`;
  await adminQuery(serverUrl, `create database "${template}"`);
  const orm = await MikroORM.init(ormConfig(withDatabase(serverUrl, template)));
  try {
    await orm.getMigrator().up();
    await loadDemoData(orm.em.fork());
  } finally {
    await orm.close(true);
    // MikroORM leaves its metadata on a global that breaks discovery in the test workers.
    delete (globalThis as Record<string, unknown>)['mikro-orm-metadata'];
  }
  process.env.TEST_SERVER_URL = serverUrl;
  process.env.TEST_RUN_PREFIX = runPrefix;
  process.env.TEST_TEMPLATE_DB = template;
  // `npm run test:pgbouncer`: every app of the run on this server goes through a PgBouncer in transaction mode
  // (test/support/app.ts), its LISTEN and shutdown straight to the server.
  if (process.env.TEST_POOLER === 'pgbouncer') {
    const pooler = await startPgBouncer(serverUrl, { default_pool_size: '10', max_client_conn: '2000' });
    (globalThis as Record<string, unknown>).__TEST_POOLER__ = pooler;
    process.env.TEST_POOLER_PORT = String(pooler.port);
  }
}
