import { createHash } from 'node:crypto';
import { DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { request, type HttpResponse } from './support/http';

// GraphQL over HTTP: who may skip the token, the HTTP status of each kind of refusal, the shape of every
// answer on /graphql (decisions.md sections 7 and 8, docs/decisions.md).

let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => JSON.stringify({ persistedQuery: { version: 1, sha256Hash: hash } });
const get = (params: Record<string, string>, headers: Record<string, string>, token?: string) =>
  request(t.url, 'GET', `/graphql?${new URLSearchParams(params)}`, { token, headers });

/** An answer in GraphQL's shape with one error of this code, and nothing executed. */
function refused(res: HttpResponse, status: number, code: string): string {
  expect([res.status, res.body?.errors?.[0]?.extensions?.code]).toEqual([status, code]);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body.data).toBeUndefined();
  for (const error of res.body.errors) expect(error.extensions.code).toBe(code);
  return res.body.errors[0].message;
}

describe('GET /graphql: only a browser asking for the IDE page skips the token', () => {
  it('answers 401 UNAUTHENTICATED in GraphQL shape to every GET that carries an operation, whatever it accepts', async () => {
    const operations: Array<Record<string, string>> = [
      { extensions: persisted(sha256('{ __typename }')) },
      { query: '{ __typename }' },
      { query: '{ me { id } }' },
      { operationName: 'Q' },
      { variables: '{}' },
      { query: '' },
    ];
    for (const accept of ['*/*', 'application/json', BROWSER_ACCEPT, 'text/html']) {
      for (const params of operations) {
        const res = await get(params, { Accept: accept });
        expect([accept, params, res.status]).toEqual([accept, params, 401]);
        expect(res.body).toEqual({ errors: [{ message: 'Missing Authorization header', extensions: { code: 'UNAUTHENTICATED' } }] });
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      }
    }
  });

  it('answers 401 to a GET without any operation that does not prefer HTML (curl, fetch, a client without Accept)', async () => {
    for (const headers of [{ Accept: '*/*' }, { Accept: 'application/json' }, { Accept: 'application/json, text/html' }, {} as Record<string, string>]) {
      refused(await get({}, headers), 401, 'UNAUTHENTICATED');
    }
  });

  it('serves the landing page to a browser navigating to /graphql, with no operation and no token', async () => {
    const res = await get({}, { Accept: BROWSER_ACCEPT });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<html/i);
  });

  it('runs a GET query of a caller with a token, `me` included, without any extra header', async () => {
    for (const accept of ['*/*', 'application/json']) {
      const res = await get({ query: '{ me { id } }' }, { Accept: accept }, architect);
      expect([res.status, res.body]).toEqual([200, { data: { me: { id: DEMO_IDS.users.architect } } }]);
    }
  });

  it('never runs a persisted-query GET without its caller: with a token it is refused as the caller\'s mistake, never INTERNAL_SERVER_ERROR', async () => {
    const query = '{ me { id } }';
    // Even after the query was sent whole with its hash (how automatic persisted queries register one).
    await request(t.url, 'POST', '/graphql', { token: architect, body: { query, extensions: JSON.parse(persisted(sha256(query))) } });
    // Apollo-Require-Preflight: the header a client adds to pass Apollo's CSRF check, which we no longer need.
    const res = await get({ extensions: persisted(sha256(query)) }, { Accept: '*/*', 'Apollo-Require-Preflight': 'true' }, architect);
    refused(res, 400, 'BAD_USER_INPUT');
    expect(res.text).not.toMatch(/userId|INTERNAL_SERVER_ERROR/);
  });
});

describe('operations /graphql does not serve over HTTP answer a 4xx in GraphQL shape', () => {
  it('answers 400 BAD_USER_INPUT to a persisted query, known, unknown or with a hash that is not its query\'s', async () => {
    const query = '{ me { id } }';
    const cases = [
      { query, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } } },
      { query, extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ organizations { id } }') } } },
      { query, extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } },
      { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } } },
      { extensions: { persistedQuery: { version: 2, sha256Hash: 'abc' } } },
    ];
    for (const body of cases) {
      // Apollo Client's persisted-query link recognizes this message and sends whole queries from then on.
      expect(refused(await request(t.url, 'POST', '/graphql', { token: architect, body }), 400, 'BAD_USER_INPUT')).toBe('PersistedQueryNotSupported');
    }
  });
});
