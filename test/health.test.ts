import { startTestApp, type TestApp } from './support/app';
import { request } from './support/http';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /healthz', () => {
  it('answers 200 while the process runs', async () => {
    const res = await request(t.url, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
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
