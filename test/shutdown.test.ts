import net from 'node:net';
import Router from '@koa/router';
import type { AppState } from '../src/platform/http/state';
import { createLogger } from '../src/platform/logger';
import { shutDown } from '../src/platform/shutdown';
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

describe('shutdown sequence (src/platform/shutdown.ts)', () => {
  it('cuts, at SHUTDOWN_TIMEOUT_MS, a connection whose request never completes (a client that stops sending its body), and reports it', async () => {
    const t = await startTestApp();
    try {
      const { port } = new URL(t.url);
      const client = net.connect(Number(port), '127.0.0.1');
      const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
      client.on('error', () => undefined);
      client.write('POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type=pa');
      await new Promise((r) => setTimeout(r, 200));
      const answeredAll = await shutDown({
        lifecycle: t.app.lifecycle, running: t.server, log: createLogger({ logLevel: 'silent' }), graceMs: 0, timeoutMs: 1000,
        endDatabaseWork: async () => 0,
        release: async () => undefined,
      });
      expect(answeredAll).toBe(false);
      await closed;
    } finally {
      await t.close();
    }
  });
});
