import { startAppOn, type TestApp } from './support/app';
import { request } from './support/http';
import { startOwnCluster, type OwnCluster } from './support/own-cluster';

// A database server of this test's own, so it can be stopped under a running service.
describe('GET /readyz with the database stopped', () => {
  let cluster: OwnCluster;
  let t: TestApp;

  beforeAll(async () => {
    cluster = await startOwnCluster('readiness');
    t = await startAppOn(await cluster.createDatabase('ready', { seed: false }));
  }, 60000);
  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  it('answers 503 with Retry-After once the database is down, 200 before', async () => {
    expect((await request(t.url, 'GET', '/readyz')).status).toBe(200);
    await cluster.stop();
    const res = await request(t.url, 'GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body).toEqual({ code: 503, message: 'The database is unavailable' });
    expect((await request(t.url, 'GET', '/healthz')).status).toBe(200);
  }, 30000);
});
