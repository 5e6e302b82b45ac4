import { randomUUID } from 'node:crypto';
import { DEMO_IDS } from '../src/seed/demo-data';
import { ANONYMOUS_OPERATION, MAX_OPERATION_NAMES, Metrics, OTHER_OPERATION, UNKNOWN_OPERATION, UNMATCHED_ROUTE } from '../src/platform/metrics';
import { loadConfig } from '../src/platform/config';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor, tokenRequest } from './support/auth';
import { gql } from './support/graphql';
import { rawRequest, request } from './support/http';
import { parseExposition, type Exposition } from './support/prometheus';

let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp({ DATABASE_POOL_SIZE: '7' });
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

async function scrape(url = `${t.url}/metrics`, token?: string): Promise<Exposition> {
  const res = await request(url, 'GET', '', { token });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(res.text);
}

/** The change of a sample's value across `fn` (0 for a sample absent before). */
async function delta(name: string, labels: Record<string, string>, fn: () => Promise<unknown>): Promise<number> {
  const before = (await scrape()).value(name, labels) ?? 0;
  await fn();
  return ((await scrape()).value(name, labels) ?? 0) - before;
}

describe('GET /metrics (Prometheus text format)', () => {
  it('answers an exposition that parses line by line, every sample under a declared family', async () => {
    const m = await scrape();
    expect(m.samples.length).toBeGreaterThan(50);
    expect(m.types.get('http_requests_total')).toBe('counter');
    expect(m.types.get('http_request_duration_seconds')).toBe('histogram');
    expect(m.types.get('graphql_operations_total')).toBe('counter');
    expect(m.types.get('db_pool_connections_in_use')).toBe('gauge');
  });

  it('counts and times each HTTP request by route template and status, never by the raw URL', async () => {
    const project = DEMO_IDS.projects.residence;
    const route = { method: 'GET', route: '/api/svc/v1/projects/:projectId', status: '200' };
    const before = await scrape();
    expect((await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token: architect })).status).toBe(200);
    const stray = `/no-such-path/${randomUUID()}`;
    expect((await request(t.url, 'GET', stray)).status).toBe(404);
    const after = await scrape();
    expect((after.value('http_requests_total', route) ?? 0) - (before.value('http_requests_total', route) ?? 0)).toBe(1);
    expect((after.value('http_request_duration_seconds_count', route) ?? 0) - (before.value('http_request_duration_seconds_count', route) ?? 0)).toBe(1);
    expect(after.value('http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(after.value('http_request_duration_seconds_count', route));
    const unmatched = { method: 'GET', route: UNMATCHED_ROUTE, status: '404' };
    expect((after.value('http_requests_total', unmatched) ?? 0) - (before.value('http_requests_total', unmatched) ?? 0)).toBe(1);
    const labelValues = after.samples.flatMap((s) => Object.values(s.labels));
    expect(labelValues.filter((v) => v.includes(project) || v.includes(stray))).toEqual([]);
  });

  it('counts a 304 answered to a conditional GET as a 304', async () => {
    const first = await rawRequest(`${t.url}/api/svc/v1/openapi.json`);
    const labels = { method: 'GET', route: '/api/svc/v1/openapi.json', status: '304' };
    expect(await delta('http_requests_total', labels, async () => {
      expect((await rawRequest(`${t.url}/api/svc/v1/openapi.json`, { headers: { 'If-None-Match': String(first.headers.etag) } })).status).toBe(304);
    })).toBe(1);
  });

  it('counts GraphQL operations by name, type and first error code; anonymous and unparsed ones under fixed names', async () => {
    const named = { operation_name: 'CurrentCaller', operation_type: 'query', error_code: 'none' };
    expect(await delta('graphql_operations_total', named, () => gql(t.url, architect, 'query CurrentCaller { me { email } }'))).toBe(1);
    const anonymous = { operation_name: ANONYMOUS_OPERATION, operation_type: 'query', error_code: 'none' };
    expect(await delta('graphql_operations_total', anonymous, () => gql(t.url, architect, '{ me { id } }'))).toBe(1);
    const unparsed = { operation_name: UNKNOWN_OPERATION, operation_type: 'unknown', error_code: 'BAD_USER_INPUT' };
    expect(await delta('graphql_operations_total', unparsed, () => gql(t.url, architect, 'query Broken { me {'))).toBe(1);
    const failed = { operation_name: 'MissingList', operation_type: 'query', error_code: 'NOT_FOUND' };
    expect(await delta('graphql_operations_total', failed, async () => {
      const res = await gql(t.url, architect, `query MissingList { tradeList(id: "${randomUUID()}") { id } }`);
      expect(res.body.errors[0].extensions.code).toBe('NOT_FOUND');
    })).toBe(1);
    expect((await scrape()).value('graphql_operation_duration_seconds_count', { operation_name: 'CurrentCaller', operation_type: 'query' })).toBeGreaterThanOrEqual(1);
  });

  it('reports the request pool: size, connections in use and idle, acquisitions waiting', async () => {
    const knex = t.orm.em.getKnex();
    const held = await knex.client.acquireConnection();
    try {
      const m = await scrape();
      expect(m.value('db_pool_connections_max')).toBe(7);
      expect(m.value('db_pool_connections_in_use')).toBeGreaterThanOrEqual(1);
      expect(m.value('db_pool_connections_idle')).toBeGreaterThanOrEqual(0);
      expect(m.value('db_pool_acquires_pending')).toBe(0);
      expect(m.value('db_pool_creates_pending')).toBe(0);
    } finally {
      await knex.client.releaseConnection(held);
    }
    expect((await scrape()).value('db_pool_connections_in_use')).toBe(0);
  });

  it('reports event-loop lag and the process (CPU, memory, heap, handles)', async () => {
    const m = await scrape();
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_user_seconds_total',
      'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_active_handles_total']) {
      expect([name, m.value(name)]).toEqual([name, expect.any(Number)]);
    }
  });
});

describe('rate_limit_rejections_total', () => {
  it('counts each 429 by the policy that refused it', async () => {
    const s = await startTestApp({ RATE_LIMIT_TOKEN_POINTS: '1' });
    try {
      const form = { grant_type: 'password', client_id: 'svc-api', username: 'architect@demo.test', password: 'wrong', scope: 'svc' };
      expect((await tokenRequest(s.url, form)).status).toBe(401);
      expect((await tokenRequest(s.url, form)).status).toBe(429);
      const m = parseExposition((await request(s.url, 'GET', '/metrics')).text);
      expect(m.value('rate_limit_rejections_total', { policy: 'token' })).toBe(1);
    } finally {
      await s.close();
    }
  });
});

describe('GraphQL operation names as label values', () => {
  it('keeps at most MAX_OPERATION_NAMES distinct names; later ones, and names that are not GraphQL names, count as (other)', () => {
    const metrics = new Metrics();
    for (let i = 0; i < MAX_OPERATION_NAMES; i++) expect(metrics.operationLabel(`Op${i}`, true)).toBe(`Op${i}`);
    expect(metrics.operationLabel('OneTooMany', true)).toBe(OTHER_OPERATION);
    expect(metrics.operationLabel('Op7', true)).toBe('Op7');
    expect(new Metrics().operationLabel('not a name', true)).toBe(OTHER_OPERATION);
    expect(new Metrics().operationLabel(null, true)).toBe(ANONYMOUS_OPERATION);
    expect(new Metrics().operationLabel('Named', false)).toBe(UNKNOWN_OPERATION);
    expect(Metrics.errorCodeLabel('BAD_USER_INPUT')).toBe('BAD_USER_INPUT');
    expect(Metrics.errorCodeLabel('<script>')).toBe('OTHER');
    expect(Metrics.errorCodeLabel(undefined)).toBe('none');
  });
});

describe('where /metrics is served', () => {
  const token = 'metrics-token-0123456789';

  it('asks for METRICS_TOKEN as a bearer token when one is set (401 without it or with another)', async () => {
    const s = await startTestApp({ METRICS_TOKEN: token });
    try {
      const none = await request(s.url, 'GET', '/metrics');
      expect([none.status, none.body.code, none.headers.get('www-authenticate')]).toEqual([401, 401, 'Bearer realm="metrics"']);
      expect((await request(s.url, 'GET', '/metrics', { token: `${token}x` })).status).toBe(401);
      expect((await scrape(`${s.url}/metrics`, token)).value('db_pool_connections_max')).toBe(10);
    } finally {
      await s.close();
    }
  });

  it('serves /metrics on METRICS_PORT only, and nothing else there', async () => {
    const s = await startTestApp({ METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' });
    try {
      const metricsUrl = s.server.metricsUrl!;
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(metricsUrl).not.toBe(`${s.url}/metrics`);
      expect((await request(s.url, 'GET', '/metrics')).status).toBe(404);
      expect((await scrape(metricsUrl)).value('db_pool_connections_max')).toBe(10);
      expect((await request(metricsUrl.replace(/\/metrics$/, '/healthz'), 'GET', '')).status).toBe(404);
      expect((await request(metricsUrl, 'POST', '')).status).toBe(405);
    } finally {
      await s.close();
    }
  });

  it('asks for METRICS_TOKEN on METRICS_PORT too when both are set', async () => {
    const s = await startTestApp({ METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', METRICS_TOKEN: token });
    try {
      expect((await request(s.server.metricsUrl!, 'GET', '')).status).toBe(401);
      expect((await scrape(s.server.metricsUrl!, token)).samples.length).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  it('is not served at all in production without METRICS_PORT or METRICS_TOKEN', async () => {
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' }).metrics.onMainPort).toBe(false);
    const s = await startTestApp({ NODE_ENV: 'production', LOG_LEVEL: 'silent' });
    try {
      expect((await request(s.url, 'GET', '/metrics')).status).toBe(404);
    } finally {
      await s.close();
    }
  });

  it('refuses a short METRICS_TOKEN at start', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow('METRICS_TOKEN must be 16 to 256 visible ASCII characters');
  });
});
