import Router from '@koa/router';
import type { AppState } from '../src/http/state';
import { startTestApp, type TestApp } from './support/app';
import { request } from './support/http';

describe('graceful shutdown', () => {
  let t: TestApp;
  beforeAll(async () => {
        const slow = new Router<AppState>();
    slow.get('/__probe/slow', async (ctx) => {
      await new Promise((r) => setTimeout(r, 400));
      ctx.body = { done: true };
    });
    t = await startTestApp({}, (app) => app.koa.use(slow.routes()));
  });
  afterAll(async () => {
    await t.app.stop();
    await t.orm.close(true);
  });

  it('finishes in-flight requests, then refuses new connections', async () => {
    const inFlight = request(t.url, 'GET', '/__probe/slow');
    await new Promise((r) => setTimeout(r, 100));
    const closed = t.server.close();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ done: true });
    await closed;
    await expect(fetch(`${t.url}/healthz`)).rejects.toThrow();
  });
});
