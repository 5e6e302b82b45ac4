import 'reflect-metadata';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../mikro-orm.config';
import { createApp, listen, type RunningServer } from '../src/app';
import { loadConfig } from '../src/config';
import { ensureDatabase, startEmbeddedCluster, withDatabase, type EmbeddedCluster } from '../src/database';
import { createLogger } from '../src/logger';
import { request } from './support/http';

// A database server of this test's own, so it can be stopped under a running service.
describe('GET /readyz with the database stopped', () => {
  let cluster: EmbeddedCluster;
  let orm: MikroORM;
  let server: RunningServer;

  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ dataDir: path.resolve(__dirname, '../.data/test-pg-readiness'), port: 54331, fast: true });
    await ensureDatabase(cluster.serverUrl, 'ready');
    const url = withDatabase(cluster.serverUrl, 'ready');
    orm = await MikroORM.init(ormConfig(url));
    const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: url });
    const app = await createApp({ config, orm, log: createLogger(config) });
    server = await listen(app, '127.0.0.1', 0);
  }, 60000);
  afterAll(async () => {
    await server?.close();
    await orm?.close(true);
    await cluster?.stop().catch(() => undefined);
  });

  it('answers 503 with Retry-After once the database is down, 200 before', async () => {
    expect((await request(server.url, 'GET', '/readyz')).status).toBe(200);
    await cluster.stop();
    const res = await request(server.url, 'GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body).toEqual({ code: 503, message: 'The database is unavailable' });
    expect((await request(server.url, 'GET', '/healthz')).status).toBe(200);
  }, 30000);
});
