import { startTestApp, type TestApp } from './support/app';
import { request } from './support/http';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /healthz', () => {
  it('answers 200 while the process runs, saying how it hears the database\'s changes', async () => {
    const res = await request(t.url, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', changes: { mode: 'in-process', hearing: true, decoder: 'streaming' } });
  });

  it('carries a request id on every response', async () => {
    const res = await request(t.url, 'GET', '/healthz');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await request(t.url, 'GET', '/healthz', { headers: { 'X-Request-Id': 'client-abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('client-abc-123');
  });
});

describe('GET /readyz', () => {
  it('answers 200 when the database answers', async () => {
    const res = await request(t.url, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });
});

describe('GET /readyz once shutdown has begun', () => {
  it('answers 503 with Retry-After once the lifecycle says shutting down, while /healthz stays 200', async () => {
    const s = await startTestApp();
    try {
      expect((await request(s.url, 'GET', '/readyz')).status).toBe(200);
      s.app.lifecycle.shuttingDown = true;
      const res = await request(s.url, 'GET', '/readyz');
      expect([res.status, res.headers.get('retry-after'), res.body]).toEqual([503, '5', { code: 503, message: 'The service is shutting down' }]);
      expect((await request(s.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
