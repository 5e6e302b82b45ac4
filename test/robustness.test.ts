import http from 'node:http';
import { gzipSync, deflateSync, brotliCompressSync } from 'node:zlib';
import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { ALL_ROUTES } from '../src/modules/rest';
import { routePaths } from '../src/platform/rest/mount';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor, tokenRequest } from './support/auth';
import { answered, gql } from './support/graphql';
import { request, type HttpResponse } from './support/http';

// Inputs a reviewer found answered 500: each must be a 400 with the body of decisions.md section 2 (REST)
// or BAD_USER_INPUT (GraphQL), and must never reach the database.

const P = '/api/svc/v1';
const I = '/api/internal/v1';
const { projects: PRJ, templates: TPL, users: USR, tradeLists: TL, organizations: ORG } = DEMO_IDS;
const NUL = 'must not contain NUL characters';
const NOT_A_CURSOR = { field: 'cursor', message: 'is not a cursor given by this service' };
const NOT_ACCEPTED = 'is not accepted by this operation';
const UUID = '0b7f4a52-3c1d-4e8e-9a51-2f6d7c8e9a10';

let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

const sql = <T>(query: string, params: unknown[] = []) => t.orm.em.fork().getConnection().execute<T[]>(query, params);
const count = async (table: string) => Number((await sql<{ n: string }>(`select count(*) as n from ${table}`))[0].n);

/** The smallest valid project create body. */
const project = (extra: Record<string, unknown> = {}) => ({
  name: 'Crèche municipale', construction_type: 'public_building', managers: [{ id: USR.architect }],
  trade_list_id: TL.standard, response_type: 'DPGF', ...extra,
});

/** A 400 validation error with exactly these field errors. */
function expectInvalid(res: HttpResponse, errors: { field: string; message: string }[]) {
  expect([res.status, res.body]).toEqual([400, { code: 400, message: 'The request is not valid', errors }]);
}

/** A 400 about the body as a whole: no field errors. */
function expectBadBody(res: HttpResponse, message: string) {
  expect([res.status, res.body]).toEqual([400, { code: 400, message }]);
}

/** A GraphQL answer with one BAD_USER_INPUT error, with these field errors when given. */
function expectBadUserInput(res: HttpResponse, errors?: { field: string; message: string }[]) {
  expect(res.status).toBe(200);
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', ...(errors ? { errors } : {}) });
}

const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('text never carries a NUL character to the database', () => {
  it('refuses a NUL in a body field, naming the field: project name, trade name, invited contractor name, partner role', async () => {
    const projects = await count('project');
    expectInvalid(await request(t.url, 'POST', `${P}/projects`, { token: architect, body: project({ name: 'a\u0000b' }) }), [{ field: 'name', message: NUL }]);
    expect(await count('project')).toBe(projects);

    const trades = await count('project_trade');
    const trade = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/trades`, {
      token: architect, body: { name: 'Serrurerie\u0000', number: '09', short_name: 'SE' },
    });
    expectInvalid(trade, [{ field: 'name', message: NUL }]);
    expect(await count('project_trade')).toBe(trades);

    const contractors = await count('contractor');
    const invite = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}/contractors`, {
      token: architect, body: { contractors: [{ name: 'Toitures\u0000Blanc', email: 'contact@toitures-blanc.fr' }] },
    });
    expectInvalid(invite, [{ field: 'contractors.0.name', message: NUL }]);
    expect(await count('contractor')).toBe(contractors);

    expectInvalid(await request(t.url, 'POST', `${P}/pf/${USR.architect}/roles`, { token: architect, body: { role: 'x\u0000' } }), [{ field: 'role', message: NUL }]);
  });

  it('refuses a NUL in a path parameter or a query parameter', async () => {
    expectInvalid(await request(t.url, 'GET', `${I}/trades/mapping/a%00b`, { token: architect }), [{ field: 'tradeName', message: NUL }]);
    expectInvalid(await request(t.url, 'GET', `${I}/trades/mapping/partner/a%00b`, { token: architect }), [{ field: 'tradeId', message: NUL }]);
    const res = await request(t.url, 'GET', `/api/v1/credits-usage?organization_id=${ORG.atelierDemo}%00`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ field: 'organization_id', message: NUL });
  });

  it('answers BAD_USER_INPUT in GraphQL for a NUL in an input field', async () => {
    const trades = await count('project_trade');
    const res = await gql(t.url, architect, 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }', {
      p: PRJ.residence, i: { name: 'Serrurerie\u0000', number: '09', shortName: 'SE' },
    });
    expectBadUserInput(res, [{ field: 'name', message: NUL }]);
    expect(await count('project_trade')).toBe(trades);
  });

  it('answers 400 invalid_request at the token endpoint for a NUL in username, password or refresh_token', async () => {
    const password = { grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' };
    for (const [name, form] of [
      ['username', { ...password, username: 'a\u0000b' }],
      ['password', { ...password, password: `${DEMO_PASSWORD}\u0000` }],
      ['scope', { ...password, scope: 'svc\u0000' }],
      ['refresh_token', { grant_type: 'refresh_token', client_id: 'svc-api', refresh_token: 'a\u0000b' }],
    ] as const) {
      const res = await tokenRequest(t.url, form);
      expect([res.status, res.body]).toEqual([400, { error: 'invalid_request', error_description: `${name} must not contain NUL characters` }]);
    }
  });
});

describe('a paging cursor is only one this service gave', () => {
  const forged = [
    cursor({ c: '2026-01-01T00:00:00Z', i: 'x' }),
    cursor({ c: '2026-01-01T00:00:00Z', i: UUID }),
    cursor({ c: '-271821-04-20T00:00:00.000Z', i: UUID }),
    cursor({ c: '0000-01-01T00:00:00.000Z', i: UUID }),
    cursor({ c: '+010000-01-01T00:00:00.000Z', i: UUID }),
  ];

  it('answers 400 naming cursor for a forged cursor of projects, templates and template documents', async () => {
    for (const path of [`${P}/projects`, `${P}/projects/${PRJ.residence}/templates`, `${P}/projects/${PRJ.residence}/templates/documents`]) {
      for (const c of forged) {
        const res = await request(t.url, 'GET', `${path}?limit=1&cursor=${c}`, { token: architect });
        expect([path, c, res.status]).toEqual([path, c, 400]);
        expectInvalid(res, [NOT_A_CURSOR]);
      }
    }
  });

  it('still accepts the cursors it gives', async () => {
    const first = await request(t.url, 'GET', `${P}/projects?limit=1`, { token: architect });
    const next = await request(t.url, 'GET', `${P}/projects?limit=1&cursor=${first.body.next_cursor}`, { token: architect });
    expect(next.status).toBe(200);
    expect(next.body.projects).toHaveLength(1);
    expect(next.body.projects[0].id).not.toBe(first.body.projects[0].id);
  });

  it('answers BAD_USER_INPUT naming after in GraphQL', async () => {
    for (const after of forged) {
      const res = await gql(t.url, architect, 'query($after: String) { projects(first: 1, after: $after) { totalCount } }', { after });
      expectBadUserInput(res, [{ field: 'after', message: NOT_A_CURSOR.message }]);
    }
  });
});

describe('credits usage days are calendar days of the years 0001 to 9999', () => {
  const DAY = 'must be a date written YYYY-MM-DD';
  const CREDITS = 'query($from: String, $to: String) { creditsUsage(from: $from, to: $to) { total from to } }';

  it('answers 400 for a day of the year 0000 or beyond 9999', async () => {
    expectInvalid(await request(t.url, 'GET', '/api/v1/credits-usage?from=0000-01-01', { token: architect }), [{ field: 'from', message: DAY }]);
    expectInvalid(await request(t.url, 'GET', '/api/v1/credits-usage?to=0000-12-31', { token: architect }), [{ field: 'to', message: DAY }]);
    expectInvalid(await request(t.url, 'GET', '/api/v1/credits-usage?to=+10000-01-01', { token: architect }), [{ field: 'to', message: DAY }]);
    expectBadUserInput(await gql(t.url, architect, CREDITS, { from: '0000-01-01' }), [{ field: 'from', message: DAY }]);
  });

  it('reports over the widest period, 0001-01-01 to 9999-12-31, every credit of the organization', async () => {
    const [{ n }] = await sql<{ n: string }>('select coalesce(sum(amount), 0) as n from credit_ledger_entry where organization_id = ?', [ORG.atelierDemo]);
    const rest = await request(t.url, 'GET', '/api/v1/credits-usage?from=0001-01-01&to=9999-12-31', { token: architect });
    expect(rest.status).toBe(200);
    expect(rest.body.credits_usage).toMatchObject({ total: Number(n), from: '0001-01-01', to: '9999-12-31' });
    expect(Number(n)).toBeGreaterThan(0);

    const last = await request(t.url, 'GET', '/api/v1/credits-usage?to=9999-12-31', { token: architect });
    expect(last.status).toBe(200);
    expect(last.body.credits_usage).toMatchObject({ total: 0, from: '9999-12-01', to: '9999-12-31' });

    const res = await gql(t.url, architect, CREDITS, { from: '0001-01-01', to: '9999-12-31' });
    expect(res.body).toEqual(answered({ creditsUsage: { total: Number(n), from: '0001-01-01', to: '9999-12-31' } }));
  });
});

describe('every item of a list of objects is an object', () => {
  it('answers 400 naming the item for an array inside a list of managers', async () => {
    const projects = await count('project');
    for (const managers of [[[{ id: USR.architect }]], [[]], [null], ['x']]) {
      expectInvalid(await request(t.url, 'POST', `${P}/projects`, { token: architect, body: project({ managers }) }), [{ field: 'managers.0', message: 'must be an object' }]);
    }
    const second = await request(t.url, 'POST', `${P}/projects`, { token: architect, body: project({ managers: [{ id: USR.architect }, [], {}] }) });
    expectInvalid(second, [{ field: 'managers.1', message: 'must be an object' }, { field: 'managers.2.id', message: 'is required' }]);
    expect(await count('project')).toBe(projects);
  });

  it('answers 400 naming the item for an array inside a list of invited contractors', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}/contractors`, {
      token: architect, body: { contractors: [[]] },
    });
    expectInvalid(res, [{ field: 'contractors.0', message: 'must be an object' }]);
  });
});

describe('a JSON body cannot reach an object\'s prototype', () => {
  const PROTO = 'The request body must not contain the key "__proto__"';

  it('answers 400 for a __proto__ key, at the top or nested, on a REST route and on /graphql', async () => {
    const headers = { 'Content-Type': 'application/json' };
    const projects = await count('project');
    const top = JSON.stringify(project()).replace('{', '{"__proto__":{"admin":true},');
    expectBadBody(await request(t.url, 'POST', `${P}/projects`, { token: architect, raw: top, headers }), PROTO);
    const nested = JSON.stringify(project({ managers: [{ id: USR.architect, x: 1 }] })).replace('"x":1', '"__proto__":{"x":1}');
    expectBadBody(await request(t.url, 'POST', `${P}/projects`, { token: architect, raw: nested, headers }), PROTO);
    expect(await count('project')).toBe(projects);
    const graphql = '{"query":"{ me { id } }","variables":{"__proto__":{"x":1}}}';
    const res = await request(t.url, 'POST', '/graphql', { token: architect, raw: graphql, headers });
    expect([res.status, res.body]).toEqual([400, { errors: [{ message: PROTO, extensions: { code: 'BAD_USER_INPUT' } }] }]);
  });

  it('refuses keys named like the properties every object inherits, as any unknown field', async () => {
    const projects = await count('project');
    for (const key of ['constructor', 'toString', 'hasOwnProperty', 'to_string', 'has_own_property', 'value_of', '__defineGetter__']) {
      const res = await request(t.url, 'POST', `${P}/projects`, { token: architect, body: project({ [key]: { x: 1 } }) });
      expect([key, res.status]).toEqual([key, 400]);
      expectInvalid(res, [{ field: key, message: NOT_ACCEPTED }]);
    }
    const nested = await request(t.url, 'POST', `${P}/projects`, { token: architect, body: project({ managers: [{ id: USR.architect, constructor: 1 }] }) });
    expectInvalid(nested, [{ field: 'managers.0.constructor', message: NOT_ACCEPTED }]);
    expect(await count('project')).toBe(projects);
  });

  it('refuses such keys in a query string too', async () => {
    for (const key of ['constructor', '__proto__', 'to_string']) {
      expectInvalid(await request(t.url, 'GET', `${P}/projects?${key}=1`, { token: architect }), [{ field: key, message: NOT_ACCEPTED }]);
    }
  });
});

describe('a body nested too deeply is refused', () => {
  const DEEP = 'The request body is nested too deeply';
  const nest = (depth: number, leaf: unknown, wrap: (v: unknown) => unknown) => {
    let v = leaf;
    for (let i = 0; i < depth; i++) v = wrap(v);
    return v;
  };

  it('answers 400 for 3000 nested arrays or objects, instead of overflowing the stack', async () => {
    for (const resources of [nest(3000, [], (v) => [v]), nest(3000, {}, (v) => ({ a: v }))]) {
      const res = await request(t.url, 'POST', `${P}/tools/ids-to-uuids`, { token: architect, body: { resources } });
      expectBadBody(res, DEEP);
    }
    const projects = await count('project');
    expectBadBody(await request(t.url, 'POST', `${P}/projects`, { token: architect, body: project({ managers: nest(100, [], (v) => [v]) }) }), DEEP);
    expect(await count('project')).toBe(projects);
  });

  it('still accepts the nesting the operations use', async () => {
    const res = await request(t.url, 'POST', `${P}/tools/ids-to-uuids`, { token: architect, body: { resources: [[], []] } });
    expect([res.status, res.body]).toEqual([200, { resources: [[], []] }]);
  });

  it('answers BAD_USER_INPUT for deeply nested GraphQL variables (refused by their types before any of our code)', async () => {
    const res = await gql(t.url, architect, 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }', {
      p: PRJ.residence, i: { name: nest(3000, 'x', (v) => [v]), number: '09', shortName: 'SE' },
    });
    // A variable of the wrong type is rejected before execution: Apollo answers such requests 400.
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT' });
  });
});

describe('a request body is decoded as its Content-Encoding says', () => {
  const json = (encoding: string) => ({ 'Content-Type': 'application/json', 'Content-Encoding': encoding });
  const NOT_DECODED = 'The request body could not be decoded as its Content-Encoding says';
  const UNSUPPORTED = 'The request body\'s Content-Encoding is not supported: use one of gzip, deflate, br, identity';
  const trade = { name: 'Serrurerie', number: '09', short_name: 'SE' };
  /** Every write of the interface that takes a body, with a valid body. */
  const writes: Array<[string, string, unknown]> = [
    ['POST', `${P}/projects`, project()],
    ['POST', `${P}/projects/${PRJ.residence}/trades`, trade],
    ['PUT', `${P}/projects/${PRJ.residence}/trades/${DEMO_IDS.projectTrades.residence['01']}`, trade],
    ['POST', `${P}/projects/${PRJ.residence}/templates`, { trade_id: DEMO_IDS.projectTrades.residence['01'] }],
    ['POST', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}/contractors`, { contractors: [{ name: 'Toitures Blanc', email: 'contact@toitures-blanc.fr' }] }],
    ['POST', `${P}/organizations/switch`, { organization_id: ORG.atelierNord }],
    ['POST', `${P}/pf/${USR.architect}/roles`, {}],
    ['POST', `${P}/tools/ids-to-uuids`, { resources: [] }],
    ['POST', `${I}/tools/uuids-to-ids`, { resources: [] }],
  ];
  const tables = ['project', 'project_trade', 'template', 'contractor', 'document'];
  const counts = async () => Promise.all(tables.map(count));

  it('answers 400 in the REST shape to every write whose body is not the gzip, deflate or br data it announces, and writes nothing', async () => {
    const before = await counts();
    for (const [method, path, body] of writes) {
      const text = JSON.stringify(body);
      for (const [encoding, raw] of [
        ['gzip', Buffer.from(text)], ['deflate', Buffer.from(text)], ['br', Buffer.from(text)], ['gzip', gzipSync(text).subarray(0, 15)],
      ] as const) {
        const res = await request(t.url, method, path, { token: architect, raw, headers: json(encoding) });
        expect([method, path, encoding, res.status]).toEqual([method, path, encoding, 400]);
        expectBadBody(res, NOT_DECODED);
      }
    }
    expect(await counts()).toEqual(before);
  });

  it('answers 415 naming the supported codings, also in Accept-Encoding, to a coding it cannot decode', async () => {
    for (const encoding of ['compress', 'zstd', 'x-gzip', 'gzip, gzip', 'unknown']) {
      const res = await request(t.url, 'POST', `${P}/tools/ids-to-uuids`, { token: architect, raw: '{"resources":[]}', headers: json(encoding) });
      expect([encoding, res.status, res.body]).toEqual([encoding, 415, { code: 415, message: UNSUPPORTED }]);
      expect(res.headers.get('accept-encoding')).toBe('gzip, deflate, br, identity');
    }
  });

  it('still reads a body really sent as gzip, deflate or br, whatever the letter case of the coding', async () => {
    const text = JSON.stringify({ resources: [[]] });
    for (const [encoding, raw] of [['gzip', gzipSync(text)], ['GZIP', gzipSync(text)], ['deflate', deflateSync(text)], [' br ', brotliCompressSync(text)], ['identity', Buffer.from(text)]] as const) {
      const res = await request(t.url, 'POST', `${P}/tools/ids-to-uuids`, { token: architect, raw, headers: json(encoding) });
      expect([encoding, res.status, res.body]).toEqual([encoding, 200, { resources: [[]] }]);
    }
  });

  it('applies the 1 MiB limit to the decoded body: 2 KiB of gzip that inflate to 8 MiB are a 413', async () => {
    const bomb = gzipSync(JSON.stringify({ resources: [['x'.repeat(8 * 1024 * 1024)]] }));
    expect(bomb.length).toBeLessThan(16 * 1024);
    const res = await request(t.url, 'POST', `${P}/tools/ids-to-uuids`, { token: architect, raw: bomb, headers: json('gzip') });
    expect([res.status, res.body]).toEqual([413, { code: 413, message: 'The request body is larger than the limit of 1 MiB' }]);
  });

  it('keeps a keep-alive connection usable after refusing a body midway: garbage announced as gzip, a chunked body over the limit', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const { hostname, port } = new URL(t.url);
    /** One request on the agent's single connection; a body given as chunks is sent without a Content-Length. */
    const send = (method: string, path: string, headers: Record<string, string>, chunks: Buffer[] = []) => new Promise<string>((resolve) => {
      const req = http.request({ host: hostname, port, method, path, headers: { Authorization: `Bearer ${architect}`, ...headers }, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
      });
      req.on('error', (err) => resolve(err.message));
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
    try {
      const garbage = Buffer.alloc(256 * 1024, 'x');
      expect(await send('POST', `${P}/tools/ids-to-uuids`, { ...json('gzip'), 'Content-Length': String(garbage.length) }, [garbage])).toBe('400');
      expect(await send('GET', '/healthz', {})).toBe('200');
      const over = Array.from({ length: 24 }, () => Buffer.alloc(64 * 1024, ' '));
      expect(await send('POST', `${P}/tools/ids-to-uuids`, { 'Content-Type': 'application/json' }, over)).toBe('413');
      expect(await send('GET', '/healthz', {})).toBe('200');
    } finally {
      agent.destroy();
    }
  });

  it('answers the token endpoint in its OAuth 2 shape: 400 invalid_request for a form that does not decode, and for a coding it cannot decode', async () => {
    const headers = (encoding: string) => ({ 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': encoding });
    const form = `grant_type=password&client_id=svc-api&username=${DEMO_USERS.architect}&password=${DEMO_PASSWORD}&scope=svc`;
    const garbage = await request(t.url, 'POST', '/auth/token', { raw: form, headers: headers('gzip') });
    expect([garbage.status, garbage.body]).toEqual([400, { error: 'invalid_request', error_description: NOT_DECODED }]);
    const unknown = await request(t.url, 'POST', '/auth/token', { raw: form, headers: headers('zstd') });
    expect([unknown.status, unknown.body]).toEqual([415, { error: 'invalid_request', error_description: UNSUPPORTED }]);
    const gzipped = await request(t.url, 'POST', '/auth/token', { raw: gzipSync(form), headers: headers('gzip') });
    expect(gzipped.status).toBe(200);
  });
});

describe('unknown query parameters are a 400 on every operation, like unknown body fields', () => {
  /** A path of the operation with well-formed parameters: unknown ids, so that nothing is found or changed. */
  const pathOf = (path: string) => path
    .replace(/\{\/:\w+\}/, '')
    .replace(':siret', '73282932000074')
    .replace(':tradeName', 'Plomberie')
    .replace(':version', '1')
    .replace(/:\w+/g, UUID);
  const withoutQuery = ALL_ROUTES.filter((r) => !r.query);

  it('answers 400 naming each parameter as sent on the 31 interface operations and the 8 webhook operations that declare no query parameters', async () => {
    // 32 route definitions of the interface: #16 is two, with and without a version.
    const ofInterface = withoutQuery.filter((r) => r.operation !== undefined);
    expect(ofInterface).toHaveLength(32);
    expect(new Set(ofInterface.map((r) => r.operation)).size).toBe(31);
    expect(withoutQuery.filter((r) => r.operation === undefined).map((r) => r.operationId).sort()).toEqual(['createWebhook', 'deleteWebhook', 'getWebhook',
      'listWebhooks', 'redeliverWebhookAttempt', 'rotateWebhookSecret', 'sendTestWebhook', 'updateWebhook']);
    for (const r of withoutQuery) {
      const path = pathOf(routePaths(r)[0]);
      const res = await request(t.url, r.method.toUpperCase(), `${path}?limit[0]=1&x=`, { token: architect });
      expect([r.operationId, res.status]).toEqual([r.operationId, 400]);
      expectInvalid(res, [{ field: 'limit[0]', message: NOT_ACCEPTED }, { field: 'x', message: NOT_ACCEPTED }]);
    }
  });

  it('refuses the request whole: inviting contractors with a stray parameter invites nobody', async () => {
    const [contractors, documents] = [await count('contractor'), await count('document')];
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}/contractors?limit[0]=1`, {
      token: architect, body: { contractors: [{ name: 'Toitures Blanc', email: 'contact@toitures-blanc.fr' }] },
    });
    expectInvalid(res, [{ field: 'limit[0]', message: NOT_ACCEPTED }]);
    expect([await count('contractor'), await count('document')]).toEqual([contractors, documents]);
  });

  it('answers 400 for a parameter an operation with a query does not declare, or one sent twice', async () => {
    expectInvalid(await request(t.url, 'GET', `${P}/projects?limit=1&page=2`, { token: architect }), [{ field: 'page', message: NOT_ACCEPTED }]);
    expectInvalid(await request(t.url, 'GET', `${P}/projects?limit=1&limit=2`, { token: architect }), [{ field: 'limit', message: 'must be a string' }]);
  });
});

describe('a name is never blank', () => {
  const BLANK = 'must not be blank';
  /** Blank to a reader: spaces, tabs and newlines, no-break and ideographic spaces, zero-width and direction marks. */
  const blanks = ['   ', ' \t\n', '\u00a0\u3000', '\u200b', '\ufeff\u200e'];
  const trade = (extra: Record<string, unknown> = {}) => ({ name: 'Serrurerie', number: '09', short_name: 'SE', ...extra });
  const TRADE = DEMO_IDS.projectTrades.residence['01'];

  it('answers 400 naming the field for a blank project name, and creates nothing', async () => {
    const projects = await count('project');
    for (const name of blanks) {
      expectInvalid(await request(t.url, 'POST', `${P}/projects`, { token: architect, body: project({ name }) }), [{ field: 'name', message: BLANK }]);
    }
    expect(await count('project')).toBe(projects);
  });

  it('answers 400 naming each field for a blank trade name, number or short name, on create and update', async () => {
    const trades = await count('project_trade');
    for (const value of blanks) {
      const all = [{ field: 'name', message: BLANK }, { field: 'number', message: BLANK }, { field: 'short_name', message: BLANK }];
      const blank = { name: value, number: value, short_name: value };
      expectInvalid(await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/trades`, { token: architect, body: blank }), all);
      expectInvalid(await request(t.url, 'PUT', `${P}/projects/${PRJ.residence}/trades/${TRADE}`, { token: architect, body: blank }), all);
      expectInvalid(await request(t.url, 'PUT', `${P}/projects/${PRJ.residence}/trades/${TRADE}`, { token: architect, body: trade({ comment: value }) }), [{ field: 'comment', message: BLANK }]);
    }
    expect(await count('project_trade')).toBe(trades);
    const [stored] = await sql<{ name: string }>('select name from project_trade where id = ?', [TRADE]);
    expect(stored.name.trim()).not.toBe('');
  });

  it('answers 400 for a blank slice name, invited contractor name or partner role', async () => {
    const templates = await count('template');
    const slice = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates`, { token: architect, body: { trade_id: TRADE, slice_name: '  ' } });
    expectInvalid(slice, [{ field: 'slice_name', message: BLANK }]);
    expect(await count('template')).toBe(templates);
    const contractors = await count('contractor');
    const invite = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}/contractors`, {
      token: architect, body: { contractors: [{ name: '\u200b', email: 'contact@toitures-blanc.fr', phone: ' ' }] },
    });
    expectInvalid(invite, [{ field: 'contractors.0.name', message: BLANK }, { field: 'contractors.0.phone', message: BLANK }]);
    expect(await count('contractor')).toBe(contractors);
    expectInvalid(await request(t.url, 'POST', `${P}/pf/${USR.architect}/roles`, { token: architect, body: { role: ' ' } }), [{ field: 'role', message: BLANK }]);
  });

  it('answers 400 for a blank trade name or partner trade id in the paths of the trade mappings', async () => {
    expectInvalid(await request(t.url, 'GET', `${I}/trades/mapping/%20%20`, { token: architect }), [{ field: 'tradeName', message: BLANK }]);
    expectInvalid(await request(t.url, 'GET', `${I}/trades/mapping/partner/%E2%80%8B`, { token: architect }), [{ field: 'tradeId', message: BLANK }]);
  });

  it('still accepts a name with spaces around visible characters, stored as sent', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/trades`, { token: architect, body: trade({ name: ' Serrurerie\u00a0' }) });
    expect(res.status).toBe(201);
    expect(res.body.trade.name).toBe(' Serrurerie\u00a0');
  });

  it('answers BAD_USER_INPUT naming the fields in GraphQL, from the same rule', async () => {
    const projects = await count('project');
    const created = await gql(t.url, architect, 'mutation($i: CreateProjectInput!) { createProject(input: $i) { project { id } } }', {
      i: { name: '   ', constructionType: 'public_building', managers: [{ id: USR.architect }], tradeListId: TL.standard, responseType: 'DPGF' },
    });
    expectBadUserInput(created, [{ field: 'name', message: BLANK }]);
    expect(await count('project')).toBe(projects);
    const trades = await count('project_trade');
    const res = await gql(t.url, architect, 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }', {
      p: PRJ.residence, i: { name: '\t', number: ' ', shortName: '\u3000' },
    });
    expectBadUserInput(res, [{ field: 'name', message: BLANK }, { field: 'number', message: BLANK }, { field: 'shortName', message: BLANK }]);
    expect(await count('project_trade')).toBe(trades);
  });

  it('documents the rule in the OpenAPI schemas', async () => {
    const doc = (await request(t.url, 'GET', `${P}/openapi.json`)).body;
    expect(doc.components.schemas.CreateProjectInput.properties.name).toMatchObject({ minLength: 1, pattern: '\\S' });
    expect(doc.components.schemas.CreateProjectTradeInput.properties.short_name).toMatchObject({ pattern: '\\S' });
  });
});
