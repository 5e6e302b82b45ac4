import http from 'node:http';
import net from 'node:net';
import Router from '@koa/router';
import { ConflictError, NotFoundError, ValidationError } from '../src/platform/errors/errors';
import { jsonBody } from '../src/platform/http/body.middleware';
import type { AppState } from '../src/platform/http/state';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { request } from './support/http';

let t: TestApp;
beforeAll(async () => {
    // Routes that exist only in this test, mounted behind the real middleware chain.
  const probe = new Router<AppState>({ prefix: '/__probe' });
  probe.post('/echo', jsonBody(), (ctx) => {
    ctx.body = { received: ctx.request.body };
  });
  probe.get('/invalid', () => {
    throw new ValidationError([{ field: 'scopes.vat', message: 'must be at least 1' }]);
  });
  probe.get('/missing', () => {
    throw new NotFoundError('Project not found');
  });
  probe.get('/conflict', () => {
    throw new ConflictError('The project is archived');
  });
  probe.get('/aborted', () => {
    // What raw-body raises when a client goes away mid-body or sends less than its Content-Length.
    throw Object.assign(new Error('request aborted'), { status: 400, expose: true, type: 'request.aborted' });
  });
  probe.get('/crash', () => {
    throw new Error('select * from secret_table where password = 42');
  });
  probe.get('/sql', async (ctx) => {
    await ctx.state.em.getConnection().execute('select * from no_such_table');
  });
  t = await startTestApp({}, (app) => app.koa.use(probe.routes()));
});
afterAll(() => t.close());

describe('error bodies', () => {
  it('400: malformed JSON is a validation error, not a 500', async () => {
    const res = await request(t.url, 'POST', '/__probe/echo', { raw: '{"name": ', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request body is not valid JSON' });
  });

  it('400: a validation error lists the failing fields', async () => {
    const res = await request(t.url, 'GET', '/__probe/invalid');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'scopes.vat', message: 'must be at least 1' }] });
  });

  it('404: an unknown route answers the error body', async () => {
    const res = await request(t.url, 'GET', '/api/svc/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'No operation at GET /api/svc/v1/nothing-here' });
  });

  it('404 and 409 from services keep their message', async () => {
    expect((await request(t.url, 'GET', '/__probe/missing')).body).toEqual({ code: 404, message: 'Project not found' });
    const conflict = await request(t.url, 'GET', '/__probe/conflict');
    expect([conflict.status, conflict.body]).toEqual([409, { code: 409, message: 'The project is archived' }]);
  });

  it('413: a JSON body over 1 MiB', async () => {
    const res = await request(t.url, 'POST', '/__probe/echo', { body: { blob: 'x'.repeat(1024 * 1024 + 10) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ code: 413, message: 'The request body is larger than the limit of 1 MiB' });
  });

  it('415: a body that is not JSON where JSON is expected', async () => {
    const res = await request(t.url, 'POST', '/__probe/echo', { raw: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe(415);
  });

  it('400: a body the parser could not read in full (aborted, shorter than its Content-Length) is the caller\'s error, not a 500', async () => {
    const res = await request(t.url, 'GET', '/__probe/aborted');
    expect([res.status, res.body]).toEqual([400, { code: 400, message: 'The request body could not be read' }]);
  });

  it('accepts a JSON body under the limit', async () => {
    const res = await request(t.url, 'POST', '/__probe/echo', { body: { name: 'ok' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: { name: 'ok' } });
  });

  it('500: an unexpected error answers the request id and nothing internal', async () => {
    for (const path of ['/__probe/crash', '/__probe/sql']) {
      const res = await request(t.url, 'GET', path);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ code: 500, message: 'Internal server error', request_id: res.headers.get('x-request-id') });
      expect(res.text).not.toMatch(/select|secret|no_such_table|at .*\.ts/);
    }
  });
});

describe('every endpoint answers errors in its own shape (decisions.md section 8)', () => {
  const json = { 'Content-Type': 'application/json' };

  it('/graphql answers 413, 415 and malformed JSON as GraphQL errors with the HTTP status', async () => {
    const token = await tokenFor(t.url, 'architect@demo.test');
    const cases: Array<[number, string, Awaited<ReturnType<typeof request>>]> = [
      [413, 'PAYLOAD_TOO_LARGE', await request(t.url, 'POST', '/graphql', { token, body: { query: `{ me { id } } #${'x'.repeat(1024 * 1024)}` } })],
      [415, 'UNSUPPORTED_MEDIA_TYPE', await request(t.url, 'POST', '/graphql', { token, raw: 'query={me{id}}', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })],
      [400, 'BAD_USER_INPUT', await request(t.url, 'POST', '/graphql', { token, raw: '{"query": ', headers: json })],
    ];
    for (const [status, code, res] of cases) {
      expect([res.status, res.body.errors?.[0]?.extensions?.code]).toEqual([status, code]);
      expect(res.body).not.toHaveProperty('code');
      expect(typeof res.body.errors[0].message).toBe('string');
    }
  });

  it('answers what Node\'s HTTP parser refuses in the shape of the endpoint too: 414 URL too long, 431 headers too large, 400 not HTTP, no body to a HEAD', async () => {
    const long = 'x'.repeat(20 * 1024);
    const rest = await request(t.url, 'GET', `/api/svc/v1/projects?cursor=${long}`);
    expect([rest.status, rest.body]).toEqual([414, { code: 414, message: 'The request URL is longer than the server accepts' }]);
    expect(rest.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const { hostname, port } = new URL(t.url);
    // node:http, unlike fetch, fails on a body after the head of an answer to HEAD.
    const head = await new Promise<string>((resolve) => {
      http.request({ host: hostname, port, method: 'HEAD', path: `/api/svc/v1/projects?cursor=${long}` }, (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
      }).on('error', (err) => resolve(err.message)).end();
    });
    expect(head).toBe('414');
    const headers = await request(t.url, 'GET', '/api/svc/v1/projects', { headers: { 'X-Padding': long } });
    expect([headers.status, headers.body]).toEqual([431, { code: 431, message: 'The request headers are larger than the server accepts' }]);
    const graphql = await request(t.url, 'GET', `/graphql?query=${long}`);
    expect([graphql.status, graphql.body]).toEqual([414, { errors: [{ message: 'The request URL is longer than the server accepts', extensions: { code: 'BAD_USER_INPUT' } }] }]);
    const oauth = await request(t.url, 'POST', '/auth/token', { raw: 'grant_type=password', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Padding': long } });
    expect([oauth.status, oauth.body]).toEqual([431, { error: 'invalid_request', error_description: 'The request headers are larger than the server accepts' }]);

    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => socket.write('GET /api/svc/v1/projects HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => { text += chunk.toString(); });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(raw.split('\r\n\r\n')[1]).toBe(JSON.stringify({ code: 400, message: 'The request is not valid HTTP' }));
  });

  it('/auth/token answers 413 in the OAuth 2 shape', async () => {
    const res = await request(t.url, 'POST', '/auth/token', {
      raw: `grant_type=password&username=${'x'.repeat(1024 * 1024 + 10)}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'The request body is larger than the limit of 1 MiB' });
  });
});
