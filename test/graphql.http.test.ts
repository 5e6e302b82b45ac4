import { createHash } from 'node:crypto';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { print } from 'graphql';
import { DashboardDocument } from '../examples/graphql/generated/graphql';
import { graphqlSchema } from '../src/modules/schema';
import { CSRF_PREVENTION } from '../src/platform/graphql/server';
import { DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { answered, gql } from './support/graphql';
import { request, type HttpResponse } from './support/http';

// GraphQL over HTTP: who may skip the token, the HTTP status of each kind of refusal, the shape of every
// answer on /graphql, and how refusals are logged (decisions.md sections 7 and 8, docs/decisions.md).

let t: TestApp;
let architect: string;
/** Every log line the service wrote, parsed. */
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'debug' }, undefined, { logTo: { write: (line) => logLines.push(JSON.parse(line)) } });
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
      expect([res.status, res.body]).toEqual([200, answered({ me: { id: DEMO_IDS.users.architect } })]);
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

describe('CSRF prevention: Authorization counts as the header that forces a preflight', () => {
  // Every request reaches Apollo with a bearer token (or is the IDE page), so the check is proven on Apollo
  // configured as /graphql configures it, with requests that carry no token.
  let apollo: ApolloServer;
  beforeAll(async () => {
    apollo = new ApolloServer({ schema: await graphqlSchema(), csrfPrevention: CSRF_PREVENTION });
    await apollo.start();
  });
  afterAll(() => apollo.stop());
  const run = (method: 'GET' | 'POST', headers: Record<string, string>) => apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: {
      method, headers: new HeaderMap(Object.entries(headers)), search: method === 'GET' ? '?query=%7B__typename%7D' : '',
      body: method === 'POST' ? { query: '{__typename}' } : undefined,
    },
    context: async () => ({}),
  });

  it('runs a simple GET or text/plain POST that carries Authorization, X-Apollo-Operation-Name or Apollo-Require-Preflight', async () => {
    for (const header of ['authorization', 'x-apollo-operation-name', 'apollo-require-preflight']) {
      expect([header, (await run('GET', { [header]: 'x' })).status ?? 200]).toEqual([header, 200]);
      expect([header, (await run('POST', { [header]: 'x', 'content-type': 'text/plain' })).status ?? 200]).toEqual([header, 200]);
    }
  });

  it('refuses with 400 a simple GET or text/plain POST that carries none of them, as a cross-site form or image would send it', async () => {
    for (const [method, headers] of [['GET', {}], ['POST', { 'content-type': 'text/plain' }], ['POST', { 'content-type': 'application/x-www-form-urlencoded' }]] as const) {
      const res = await run(method, headers);
      expect(res.status).toBe(400);
      expect(res.body.kind === 'complete' && res.body.string).toMatch(/Cross-Site Request Forgery/);
    }
  });
});

describe('HTTP status of GraphQL request errors: 400 for the caller\'s mistakes (decisions.md section 8)', () => {
  it('answers 400 BAD_USER_INPUT to a syntax error', async () => {
    for (const query of ['{ me { ', '}', 'query(', '{ me { id } } }', '"unterminated', '{ me { id @ } }']) {
      const message = refused(await gql(t.url, architect, query), 400, 'BAD_USER_INPUT');
      expect(message).toMatch(/^Syntax Error/);
    }
  });

  it('answers 400 TOKEN_LIMIT to a query over the limit of 4,000 tokens, and runs one of exactly 4,000', async () => {
    // 20 tokens besides the list: `query ( $ a : ID ! ) { projectsStatistics ( ids : [ ... ] ) { answered } }`; each `$a` is 2.
    const statistics = (ids: number) => `query($a: ID!) { projectsStatistics(ids: [${Array(ids).fill('$a').join(' ')}]) { answered } }`;
    const over = refused(await gql(t.url, architect, statistics(1991), { a: DEMO_IDS.projects.residence }), 400, 'TOKEN_LIMIT');
    expect(over).toBe('The document has more than 4000 tokens, the limit');
    const under = await gql(t.url, architect, statistics(1990), { a: DEMO_IDS.projects.residence });
    expect([under.status, under.body.errors, under.body.data?.projectsStatistics?.length]).toEqual([200, undefined, 1990]);
  });

  it('answers 400 DOCUMENT_SIZE_LIMIT to a document over 64 KiB, before parsing it: a one-token comment included (a GET cannot carry one: Node refuses such a URL)', async () => {
    const comment = (bytes: number) => `{ me { id } } #${'x'.repeat(bytes - 15)}`;
    expect(Buffer.byteLength(comment(65537))).toBe(65537);
    for (const query of [comment(65537), comment(1024 * 1024 - 100)]) {
      expect(refused(await gql(t.url, architect, query), 400, 'DOCUMENT_SIZE_LIMIT')).toMatch(/over the limit of 65536 bytes/);
    }
    // Bytes, not characters: 40,000 characters of two bytes each.
    refused(await gql(t.url, architect, comment(40000).replace(/x/g, 'é')), 400, 'DOCUMENT_SIZE_LIMIT');
    const exactly = await gql(t.url, architect, comment(65536));
    expect([exactly.status, exactly.body.data]).toEqual([200, { me: { id: DEMO_IDS.users.architect } }]);
  });

  it('answers 400 DEPTH_LIMIT `The document is nested too deeply` when the parser runs out of stack before the token limit', async () => {
    const query = `{ projectsStatistics(ids: ${'['.repeat(3990)}"x"${']'.repeat(3990)}) { answered } }`;
    expect(refused(await gql(t.url, architect, query), 400, 'DEPTH_LIMIT')).toBe('The document is nested too deeply');
  });

  it('answers 400 BAD_USER_INPUT to validation errors, and each query limit with its own code: depth, aliases, directives, repeated fields, cost', async () => {
    const deep = `{ projects { nodes { templates { ${'slices { '.repeat(12)} id ${'} '.repeat(12)} } } } }`;
    const cases: Array<[string, string, RegExp]> = [
      ['{ nope }', 'BAD_USER_INPUT', /Cannot query field "nope"/],
      ['{ me }', 'BAD_USER_INPUT', /must have a selection/],
      ['{ project(id: true) { id } }', 'BAD_USER_INPUT', /ID cannot represent/],
      [deep, 'DEPTH_LIMIT', /^Query depth limit of 12 exceeded, found 16\.$/],
      [`{ ${Array.from({ length: 16 }, (_, i) => `a${i}: me { id }`).join(' ')} }`, 'ALIAS_LIMIT', /^Aliases limit of 15 exceeded, found 16\.$/],
      [`{ me { id ${'@include(if: true) '.repeat(21)} } }`, 'DIRECTIVE_LIMIT', /^Directives limit of 20 exceeded, found 21\.$/],
      [`{ me { ${'id '.repeat(102)} } }`, 'FIELD_REPEAT_LIMIT', /selects 101 fields again .* over the limit of 100/],
      // 5 x (1 + 500 x 10): each project's node counts 10 values (test/graphql.cost.test.ts).
      [`{ ${Array.from({ length: 5 }, (_, i) => `p${i}: projects(first: 500) { nodes { id name templates { id slices { id } } statistics { answered declined } } }`).join(' ')} }`,
        'COST_LIMIT', /^The operation's requested cost is 25005, over the limit of 20000/],
    ];
    for (const [query, code, message] of cases) {
      const res = await gql(t.url, architect, query);
      // The limit first; graphql-js's own errors of the same document (21 @include at one place) after it.
      expect([query, res.status, res.body.data, res.body.errors[0].extensions.code]).toEqual([query, 400, undefined, code]);
      expect(res.body.errors[0].message).toMatch(message);
      for (const error of res.body.errors.slice(1)) expect(error.extensions.code).toBe('BAD_USER_INPUT');
      expect(res.text).not.toMatch(/Syntax Error/);
    }
  });

  it('reports a document both too deep and too costly as too deep: depth is a validation rule, cost is reckoned only for a valid document', async () => {
    const deepAndCostly = `{ projects(first: 500) { nodes { id name templates { ${'slices { '.repeat(9)} id ${'} '.repeat(9)} } } } }`;
    const res = await gql(t.url, architect, deepAndCostly);
    expect(refused(res, 400, 'DEPTH_LIMIT')).toMatch(/depth limit of 12/);
  });

  it('refuses 3,990 repeated fields, flat or nested, at once with FIELD_REPEAT_LIMIT rather than after graphql-js gives up (`Validation aborted.`)', async () => {
    const flat = `{ me { ${'id '.repeat(3990)} } }`;
    const nested = `{ projects { nodes { ${'templates { id documents { id } } '.repeat(300)} } } }`;
    for (const query of [flat, nested]) {
      const started = Date.now();
      const res = await gql(t.url, architect, query);
      expect(refused(res, 400, 'FIELD_REPEAT_LIMIT')).toMatch(/select each field once/);
      // Not a timing assertion of the service's speed: a refusal that ran graphql-js's pairwise check takes 100-600 ms.
      expect(Date.now() - started).toBeLessThan(2000);
    }
  });

  it('measures depth by the fields a query selects, not by its fragments: the front end\'s dashboard runs, the same too-deep query is refused written either way', async () => {
    const dashboard = await gql(t.url, architect, print(DashboardDocument));
    expect([dashboard.status, dashboard.body.errors]).toEqual([200, undefined]);
    expect(dashboard.body.data.projects.nodes.length).toBeGreaterThan(0);
    // projects > nodes > templates > n × slices > id: 4 + n levels of fields, 12 at most.
    const inline = (n: number) => `{ projects { nodes { templates { ${'slices { '.repeat(n)} id ${'} '.repeat(n)} } } } }`;
    const withFragments = (n: number) => `{ projects { nodes { templates { ...S0 } } } } ${
      Array.from({ length: n }, (_, i) => `fragment S${i} on Template { slices { ${i < n - 1 ? `...S${i + 1}` : 'id'} } }`).join(' ')}`;
    for (const query of [inline(8), withFragments(8)]) expect([query, (await gql(t.url, architect, query)).status]).toEqual([query, 200]);
    for (const query of [inline(9), withFragments(9)]) expect(refused(await gql(t.url, architect, query), 400, 'DEPTH_LIMIT')).toMatch(/depth limit of 12/);
  });

  it('answers 400 BAD_USER_INPUT to a variable of the wrong type, a missing one, and variables that are not an object', async () => {
    const q = 'query($id: ID!) { project(id: $id) { id } }';
    for (const variables of [{ id: { a: 1 } }, { id: [1] }, { id: true }, {}, { id: null }]) refused(await gql(t.url, architect, q, variables), 400, 'BAD_USER_INPUT');
    refused(await request(t.url, 'POST', '/graphql', { token: architect, body: { query: q, variables: '{"id":"x"}' } }), 400, 'BAD_USER_INPUT');
  });
});

describe('suggestions: graphql-js\'s "Did you mean" is left out of every message where introspection is off', () => {
  let closed: TestApp;
  beforeAll(async () => {
    closed = await startTestApp({ GRAPHQL_INTROSPECTION: 'false' });
  });
  afterAll(() => closed?.close());

  const CREATE = (input: string) => `mutation($t: ConstructionType!) { createProject(input: { ${input} }) { project { id } } }`;
  // Every kind graphql-js suggests: a field, an argument, a type, an input field, an enum value in the document and in a variable.
  const mistakes: Array<[string, Record<string, unknown> | undefined]> = [
    ['{ projectz { totalCount } }', undefined],
    ['{ projects(frist: 1) { totalCount } }', undefined],
    ['query($x: Strng) { me { id } }', undefined],
    [CREATE('name: "x", constructionType: offce, manager: []'), { t: 'office' }],
    ['mutation($i: CreateProjectInput!) { createProject(input: $i) { project { id } } }', { i: {
      name: 'x', constructionType: 'offce', managers: [{ id: DEMO_IDS.users.architect }], tradeListId: DEMO_IDS.tradeLists.standard,
      responseType: 'DPGF', scopes: { currency: 'EUR', vat: 20 },
    } }],
  ];

  it('answers each mistake 400 BAD_USER_INPUT without a suggestion, on a server without introspection (production\'s default)', async () => {
    const token = await tokenFor(closed.url, 'architect@demo.test');
    for (const [query, variables] of mistakes) {
      const res = await gql(closed.url, token, query, variables);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.text).not.toMatch(/Did you mean|Suggestion/);
    }
  });

  it('keeps them where introspection is on (development), where the schema is no secret', async () => {
    const suggested = [];
    for (const [query, variables] of mistakes) suggested.push(/Did you mean/.test((await gql(t.url, architect, query, variables)).text));
    expect(suggested).toEqual([true, true, true, true, true]);
  });
});

describe('operations /graphql does not serve over HTTP answer a 4xx in GraphQL shape', () => {
  it('answers 400 BAD_USER_INPUT to a subscription, by POST and by GET', async () => {
    for (const query of ['subscription { me { id } }', 'subscription S { projects { totalCount } }']) {
      expect(refused(await gql(t.url, architect, query), 400, 'BAD_USER_INPUT')).toBe('Subscriptions are not served over HTTP');
      refused(await get({ query }, { Accept: '*/*' }, architect), 400, 'BAD_USER_INPUT');
    }
  });

  it('answers 400 BAD_USER_INPUT to a subscription whose root field depends on a variable (graphql-js\'s rule throws on it)', async () => {
    const query = 'subscription S($flag: Boolean!) { projectChanged @include(if: $flag) { id } }';
    for (const variables of [{ flag: true }, { flag: [] }, {}]) {
      expect(refused(await gql(t.url, architect, query, variables), 400, 'BAD_USER_INPUT')).toBe('Subscriptions are not served over HTTP');
      refused(await get({ query, variables: JSON.stringify(variables) }, { Accept: '*/*' }, architect), 400, 'BAD_USER_INPUT');
    }
  });

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

  it('answers 405 with Allow: POST to a mutation sent by GET, and runs nothing', async () => {
    const mutation = `mutation { archiveProject(id: "${DEMO_IDS.projects.residence}") { project { archived } } }`;
    const res = await get({ query: mutation }, { Accept: '*/*' }, architect);
    refused(res, 405, 'BAD_USER_INPUT');
    expect(res.headers.get('allow')).toBe('POST');
    const project = await gql(t.url, architect, `{ project(id: "${DEMO_IDS.projects.residence}") { archived } }`);
    expect(project.body.data.project.archived).toBe(false);
  });

  it('answers 405 with Allow: GET, POST to the other methods, before authentication', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      for (const token of [architect, undefined]) {
        const res = await request(t.url, method, '/graphql', { token, body: { query: '{ me { id } }' } });
        expect([method, refused(res, 405, 'BAD_USER_INPUT')]).toEqual([method, `${method} is not allowed on /graphql: use GET or POST`]);
        expect(res.headers.get('allow')).toBe('GET, POST');
      }
    }
  });

  it('answers 400 BAD_USER_INPUT to a request without any query, by POST and by GET', async () => {
    for (const body of [{}, { variables: {} }, { query: '' }, { query: null }, { operationName: 'Q' }]) {
      refused(await request(t.url, 'POST', '/graphql', { token: architect, body }), 400, 'BAD_USER_INPUT');
    }
    refused(await get({}, { Accept: '*/*' }, architect), 400, 'BAD_USER_INPUT');
    refused(await get({}, {}, architect), 400, 'BAD_USER_INPUT');
  });
});

describe('logging: only server faults are errors', () => {
  const linesOf = (res: HttpResponse) => logLines.filter((l) => l.request_id === res.headers.get('x-request-id'));
  /** The log lines of a request besides its access line. */
  const besidesAccess = (res: HttpResponse) => linesOf(res).filter((l) => l.msg !== 'request');

  it('logs a request with 300 repeated directives as one line below WARN, without a stack trace', async () => {
    const res = await gql(t.url, architect, `{ me { id ${'@skip(if: false) '.repeat(300)} } }`);
    expect([res.status, res.body.errors[0].extensions.code]).toEqual([400, 'DIRECTIVE_LIMIT']);
    const lines = besidesAccess(res);
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBeLessThan(40);
    expect(JSON.stringify(lines[0])).not.toMatch(/stack|\.js:\d|\.ts:\d/);
    expect(JSON.stringify(lines[0]).length).toBeLessThan(1000);
  });

  it('logs no client mistake at WARN or above, nor with a stack trace: syntax, tokens, validation, limits, variables, service refusals', async () => {
    const responses = [
      await gql(t.url, architect, '{ me { '),
      await gql(t.url, architect, `{ me { ${'id '.repeat(4000)} } }`),
      await gql(t.url, architect, '{ nope }'),
      await gql(t.url, architect, `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: me { id }`).join(' ')} }`),
      await gql(t.url, architect, 'query($id: ID!) { project(id: $id) { id } }', { id: { a: 1 } }),
      await gql(t.url, architect, 'subscription { me { id } }'),
      await gql(t.url, architect, '{ project(id: "0b0b0b0b-0000-4000-8000-000000000000") { id } }'),
      await gql(t.url, architect, '{ project(id: "not-a-uuid") { id } }'),
    ];
    for (const res of responses) {
      expect(res.status).toBeLessThan(500);
      const lines = besidesAccess(res);
      expect(lines.length).toBeLessThanOrEqual(1);
      for (const line of lines) {
        expect(line.level).toBeLessThan(40);
        expect(JSON.stringify(line)).not.toMatch(/stack|\.js:\d|\.ts:\d/);
      }
    }
  });

  it('logs a real server fault at ERROR with its stack, under the request id', async () => {
    const connection = t.orm.em.fork().getConnection();
    // A fault the service cannot foresee: the database lost a column it reads.
    await connection.execute('alter table project rename column name to name_lost');
    try {
      const res = await gql(t.url, architect, '{ projects { nodes { name } } }');
      expect(res.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['INTERNAL_SERVER_ERROR']);
      const errors = linesOf(res).filter((l) => (l.level as number) >= 50);
      expect(errors).toHaveLength(1);
      expect(errors[0].msg).toBe('unexpected GraphQL error');
      expect(JSON.stringify(errors[0].err)).toMatch(/stack/);
    } finally {
      await connection.execute('alter table project rename column name_lost to name');
    }
  });
});
