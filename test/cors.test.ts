import { ConfigError, loadConfig } from '../src/platform/config';
import { CORS_MAX_AGE_SECONDS, allowedOrigin } from '../src/platform/http/cors.middleware';
import { ALL_ROUTES } from '../src/modules/rest';
import { routePaths } from '../src/platform/rest/mount';
import { DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor, tokenRequest } from './support/auth';
import { answered } from './support/graphql';
import { request, type HttpResponse } from './support/http';

// CORS (decisions.md section 8, docs/decisions.md "Browsers"): which origins a page may call the service from,
// what its preflights answer, and what a page may send and read, error answers included.

let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

/** A front end's development server: allowed by default outside production. */
const DEV_PAGE = 'http://localhost:5173';
const UUID = '00000000-0000-4000-8000-000000000000';

/** Every path the service answers, with its methods: each REST operation (and its alias), GraphQL, the token endpoint. */
function everyEndpoint(): Array<{ method: string; path: string }> {
  const endpoints = ALL_ROUTES.flatMap((r) => routePaths(r).map((p) => ({
    method: r.method.toUpperCase(),
    path: p.replace('{/:version}', '').replace(/:siret/, '73282932000074').replace(/:[A-Za-z]+/g, UUID),
  })));
  return [...endpoints, { method: 'POST', path: '/graphql' }, { method: 'GET', path: '/graphql' }, { method: 'POST', path: '/auth/token' }];
}

const preflight = (path: string, origin: string, method = 'POST', requestHeaders = 'authorization,content-type') =>
  request(t.url, 'OPTIONS', path, { headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': requestHeaders } });

const list = (value: string | null) => (value ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);

/** The headers of a CORS answer, or their absence. */
function corsHeaders(res: HttpResponse) {
  return Object.fromEntries([...res.headers.entries()].filter(([name]) => name.startsWith('access-control-')));
}

describe('Preflight: 204 for an allowed origin on every REST path, /graphql and /auth/token', () => {
  it('answers OPTIONS with Access-Control-Request-Method 204, no body, allowing the origin and the method', async () => {
    const endpoints = everyEndpoint();
    expect(endpoints.length).toBeGreaterThan(40);
    for (const { method, path } of endpoints) {
      const res = await preflight(path, DEV_PAGE, method);
      expect([path, res.status, res.text]).toEqual([path, 204, '']);
      expect([path, res.headers.get('access-control-allow-origin')]).toEqual([path, DEV_PAGE]);
      expect(list(res.headers.get('access-control-allow-methods'))).toContain(method.toLowerCase());
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(list(res.headers.get('vary'))).toContain('origin');
    }
  });

  it('answers a preflight for a loopback origin on any port, over http or https, by name or address (the development default)', async () => {
    for (const origin of ['http://localhost:3001', 'https://localhost:8443', 'http://127.0.0.1:5173', 'http://[::1]:4200', 'http://localhost']) {
      const res = await preflight('/graphql', origin);
      expect([origin, res.status, res.headers.get('access-control-allow-origin')]).toEqual([origin, 204, origin]);
    }
  });
});

describe('Preflight: Authorization, Content-Type and X-Request-Id may be sent', () => {
  it('lists the request headers a front end sends, Apollo\'s CSRF headers included', async () => {
    const res = await preflight('/api/svc/v1/projects', DEV_PAGE, 'GET', 'authorization,x-request-id');
    expect(list(res.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining([
      'authorization', 'content-type', 'x-request-id', 'apollo-require-preflight', 'x-apollo-operation-name',
    ]));
  });

  it('allows exactly the methods the routes answer: GET, HEAD, POST, PUT, DELETE', async () => {
    const res = await preflight('/api/svc/v1/projects/' + UUID, DEV_PAGE, 'DELETE');
    expect(list(res.headers.get('access-control-allow-methods')).sort()).toEqual(['delete', 'get', 'head', 'post', 'put']);
  });
});

describe('Preflight: cached by the browser', () => {
  it(`answers Access-Control-Max-Age ${CORS_MAX_AGE_SECONDS} (two hours, Chromium's ceiling)`, async () => {
    for (const path of ['/graphql', '/auth/token', '/api/svc/v1/projects']) {
      expect((await preflight(path, DEV_PAGE)).headers.get('access-control-max-age')).toBe(String(CORS_MAX_AGE_SECONDS));
    }
  });
});

describe('Requests from an allowed origin: the answer may be read, X-Request-Id, Retry-After and the rate-limit headers with it', () => {
  const EXPOSED = ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy', 'www-authenticate'];

  it('marks REST, GraphQL and token answers readable by the origin and exposes the documented headers', async () => {
    const answers = {
      rest: await request(t.url, 'GET', '/api/svc/v1/projects', { token: architect, headers: { Origin: DEV_PAGE } }),
      graphql: await request(t.url, 'POST', '/graphql', { token: architect, body: { query: '{ me { id } }' }, headers: { Origin: DEV_PAGE } }),
      token: await tokenRequest(t.url, { grant_type: 'password', client_id: 'svc-api', username: 'architect@demo.test', password: 'demo-password', scope: 'svc' }, { Origin: DEV_PAGE }),
    };
    expect(answers.graphql.body).toEqual(answered({ me: { id: DEMO_IDS.users.architect } }));
    for (const [name, res] of Object.entries(answers)) {
      expect([name, res.status, res.headers.get('access-control-allow-origin')]).toEqual([name, 200, DEV_PAGE]);
      expect(list(res.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(EXPOSED));
      expect(list(res.headers.get('vary'))).toContain('origin');
    }
  });

  it('keeps the request id a page sent, which the page can now read', async () => {
    const res = await request(t.url, 'GET', '/api/svc/v1/projects', { token: architect, headers: { Origin: DEV_PAGE, 'X-Request-Id': 'page-request-0001' } });
    expect(res.headers.get('x-request-id')).toBe('page-request-0001');
    expect(res.headers.get('access-control-allow-origin')).toBe(DEV_PAGE);
  });
});

describe('Error answers carry the CORS headers too, so that a page can read a 401, 404, 405, 413 or 503 body', () => {
  it('adds them to errors of every surface: REST, GraphQL and OAuth bodies', async () => {
    const headers = { Origin: DEV_PAGE };
    const answers: Array<[string, HttpResponse, number]> = [
      ['REST without token', await request(t.url, 'GET', '/api/svc/v1/projects', { headers }), 401],
      ['GraphQL without token', await request(t.url, 'POST', '/graphql', { body: { query: '{ me { id } }' }, headers }), 401],
      ['wrong password', await tokenRequest(t.url, { grant_type: 'password', client_id: 'svc-api', username: 'architect@demo.test', password: 'nope', scope: 'svc' }, headers), 401],
      ['unknown path', await request(t.url, 'GET', '/api/svc/v1/nothing-here', { headers }), 404],
      ['method not allowed', await request(t.url, 'PUT', '/graphql', { token: architect, headers }), 405],
      ['body over 1 MiB', await request(t.url, 'POST', '/graphql', { token: architect, raw: JSON.stringify({ query: ' '.repeat(1100000) }), headers: { ...headers, 'Content-Type': 'application/json' } }), 413],
    ];
    for (const [what, res, status] of answers) {
      expect([what, res.status, res.headers.get('access-control-allow-origin')]).toEqual([what, status, DEV_PAGE]);
      expect(list(res.headers.get('access-control-expose-headers'))).toContain('x-request-id');
    }
    expect(answers[1][1].body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(answers[2][1].body.error).toBe('invalid_grant');
  });

  it('adds them to a 503 with Retry-After, which the page may read', async () => {
    t.app.lifecycle.shuttingDown = true;
    try {
      const res = await request(t.url, 'GET', '/readyz', { headers: { Origin: DEV_PAGE } });
      expect([res.status, res.headers.get('access-control-allow-origin'), res.headers.get('retry-after')]).toEqual([503, DEV_PAGE, expect.stringMatching(/^\d+$/)]);
      expect(list(res.headers.get('access-control-expose-headers'))).toContain('retry-after');
    } finally {
      t.app.lifecycle.shuttingDown = false;
    }
  });
});

describe('Disallowed origins get no CORS header', () => {
  const FOREIGN = ['https://evil.example', 'http://localhost.evil.example:3000', 'http://127.0.0.1.nip.io', 'null', 'http://localhost:5173/app', 'file://', 'chrome-extension://abc'];

  it('answers their preflight without any Access-Control-* header and not 204', async () => {
    for (const origin of FOREIGN) {
      for (const path of ['/graphql', '/auth/token', '/api/svc/v1/projects']) {
        const res = await preflight(path, origin);
        expect([origin, path, res.status === 204, corsHeaders(res)]).toEqual([origin, path, false, {}]);
      }
    }
  });

  it('answers their requests as any other, without Access-Control-Allow-Origin (the browser withholds the answer)', async () => {
    const res = await request(t.url, 'GET', '/api/svc/v1/projects', { token: architect, headers: { Origin: 'https://evil.example' } });
    expect([res.status, corsHeaders(res)]).toEqual([200, {}]);
    expect(list(res.headers.get('vary'))).toContain('origin');
  });

  it('adds nothing to a request without Origin (curl, servers), and an OPTIONS that is no preflight is still no operation', async () => {
    expect(corsHeaders(await request(t.url, 'GET', '/api/svc/v1/projects', { token: architect }))).toEqual({});
    const res = await request(t.url, 'OPTIONS', '/api/svc/v1/projects', { headers: { Origin: DEV_PAGE } });
    expect([res.status, res.body]).toEqual([404, { code: 404, message: 'No operation at OPTIONS /api/svc/v1/projects' }]);
  });
});

describe('Allowed origins come from CORS_ORIGINS', () => {
  it('defaults to the loopback origins outside production and to none in production', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).cors).toEqual({ origins: [], loopback: true });
    expect(loadConfig({ NODE_ENV: 'test' }).cors).toEqual({ origins: [], loopback: true });
    const production = loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x' }).cors;
    expect(production).toEqual({ origins: [], loopback: false });
    for (const origin of [DEV_PAGE, 'http://127.0.0.1:3000', 'https://app.example.com']) expect(allowedOrigin(origin, production)).toBeNull();
  });

  it('reads a comma-separated list, written as browsers send Origin; the list replaces the loopback default', () => {
    const cors = loadConfig({ CORS_ORIGINS: ' https://App.Example.com/ , http://127.0.0.1:5173,https://app.example.com:443' }).cors;
    expect(cors).toEqual({ origins: ['https://app.example.com', 'http://127.0.0.1:5173'], loopback: false });
    expect(allowedOrigin('https://app.example.com', cors)).toBe('https://app.example.com');
    expect(allowedOrigin('http://127.0.0.1:5173', cors)).toBe('http://127.0.0.1:5173');
    expect(allowedOrigin('http://127.0.0.1:5174', cors)).toBeNull();
    expect(allowedOrigin('https://app.example.com.evil.example', cors)).toBeNull();
  });

  it('accepts * alone: any origin, answered with Access-Control-Allow-Origin: *', () => {
    const cors = loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/x', CORS_ORIGINS: '*' }).cors;
    expect(cors).toEqual({ origins: '*', loopback: false });
    expect(allowedOrigin('https://anything.example', cors)).toBe('*');
    expect(allowedOrigin('', cors)).toBeNull();
  });

  it.each([
    ['https://app.example.com/app', 'a path'],
    ['app.example.com', 'no scheme'],
    ['ftp://app.example.com', 'another scheme'],
    ['https://user:pw@app.example.com', 'credentials'],
    ['https://app.example.com?x=1', 'a query'],
    ['*,https://app.example.com', '* with others'],
  ])('stops on a CORS_ORIGINS entry with %s (%s) with a line naming the variable', (value) => {
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/^CORS_ORIGINS must/);
  });

  it('serves the configured origins end to end, and no longer the loopback ones', async () => {
    const configured = await startTestApp({ CORS_ORIGINS: 'https://app.example.com' });
    try {
      const allowed = await request(configured.url, 'OPTIONS', '/graphql', { headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' } });
      expect([allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([204, 'https://app.example.com']);
      const loopback = await request(configured.url, 'OPTIONS', '/graphql', { headers: { Origin: DEV_PAGE, 'Access-Control-Request-Method': 'POST' } });
      expect([loopback.status === 204, corsHeaders(loopback)]).toEqual([false, {}]);
    } finally {
      await configured.close();
    }
  });
});
