import { randomUUID } from 'node:crypto';
import { DEMO_IDS } from '../src/seed/demo-ids';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { startCuttingProxy } from './support/cutting-proxy';
import { queryRows } from './support/databases';
import { holdProjectWrites } from './support/project-lock';
import { gql } from './support/graphql';
import { request } from './support/http';

const P = '/api/svc/v1';
const { projects: PRJ, users: USR, tradeLists: LISTS } = DEMO_IDS;

let t: TestApp;
let second: TestApp;
let architect: string;

const projectBody = (name: string) => ({
  name, construction_type: 'office', managers: [{ id: USR.architect }],
  trade_list_id: LISTS.standard, response_type: 'DPGF', scopes: { currency: 'EUR', vat: 20 },
});
const createProject = (name: string, key?: string, url = t.url, body: unknown = projectBody(name)) =>
  request(url, 'POST', `${P}/projects`, { token: architect, body, headers: key ? { 'Idempotency-Key': key } : {} });
const projectsNamed = async (name: string) => (await queryRows<{ id: string }>(t.databaseUrl, 'select id from project where name = $1', [name])).length;

beforeAll(async () => {
  t = await startTestApp({ DATABASE_LOCK_TIMEOUT_MS: '5000' });
  // Another instance on the same database: keys are kept in it, not in an instance.
  second = await startTestApp({ AUTH_ISSUER: t.url }, undefined, { database: t.databaseUrl });
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

describe('Idempotency-Key on REST writes', () => {
  it('replays the first answer to a retry with the same key and body, with Idempotent-Replayed, writing nothing', async () => {
    const key = randomUUID();
    const first = await createProject('idem replay', key);
    const retry = await createProject('idem replay', key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect([retry.status, retry.text, retry.headers.get('idempotent-replayed')]).toEqual([201, first.text, 'true']);
    expect(await projectsNamed('idem replay')).toBe(1);
  });

  it('treats a body with its keys in another order as the same request', async () => {
    const key = randomUUID();
    const body = projectBody('idem order');
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect((await createProject('idem order', key, t.url, body)).status).toBe(201);
    expect((await createProject('idem order', key, t.url, reordered)).headers.get('idempotent-replayed')).toBe('true');
    expect(await projectsNamed('idem order')).toBe(1);
  });

  it('answers 422 to the same key with another body, and writes nothing', async () => {
    const key = randomUUID();
    expect((await createProject('idem first', key)).status).toBe(201);
    const other = await createProject('idem other', key);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe(422);
    expect(other.body.message).toMatch(/Idempotency-Key was used for another request/);
    expect(await projectsNamed('idem other')).toBe(0);
  });

  it('answers 422 to the same key on another path', async () => {
    const key = randomUUID();
    expect((await createProject('idem path', key)).status).toBe(201);
    const trade = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/trades`, {
      token: architect, body: { name: 'Idem', number: '77', short_name: 'ID' }, headers: { 'Idempotency-Key': key },
    });
    expect(trade.status).toBe(422);
  });

  it('keeps nothing of a request refused by validation: the same key then serves the corrected request', async () => {
    const key = randomUUID();
    const refused = await createProject('idem invalid', key, t.url, { ...projectBody('idem invalid'), scopes: { currency: 'EUR', vat: -1 } });
    expect(refused.status).toBe(400);
    const corrected = await createProject('idem invalid', key);
    expect([corrected.status, corrected.headers.get('idempotent-replayed')]).toEqual([201, null]);
  });

  it('keeps nothing of a request that conflicted: the same key runs again', async () => {
    const { projectId, tradeId, templateId } = await projectWithTemplate('idem conflict');
    const key = randomUUID();
    const del = () => request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${tradeId}`, { token: architect, headers: { 'Idempotency-Key': key } });
    // The trade is in use by its template.
    expect((await del()).status).toBe(409);
    expect((await request(t.url, 'DELETE', `${P}/projects/${projectId}/templates/${templateId}`, { token: architect })).status).toBe(204);
    const again = await del();
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([204, null]);
  });

  it('answers 409 with Retry-After, at once, to a retry while the first request still runs', async () => {
    const key = randomUUID();
    // The first trade creation waits for the project's write lock, held here as an archive would.
    const lock = await holdProjectWrites(t.databaseUrl, PRJ.residence);
    const body = { name: 'Idem in flight', number: '79', short_name: 'IF' };
    const send = (url: string) => request(url, 'POST', `${P}/projects/${PRJ.residence}/trades`, { token: architect, body, headers: { 'Idempotency-Key': key } });
    try {
      const first = send(t.url);
      await lock.waiter();
      const started = Date.now();
      const retry = await send(second.url);
      expect(Date.now() - started).toBeLessThan(1000);
      expect([retry.status, retry.headers.get('retry-after')]).toEqual([409, '1']);
      expect(retry.body.message).toMatch(/still running/);
      await lock.release();
      expect((await first).status).toBe(201);
    } finally {
      await lock.release();
    }
    expect((await send(t.url)).headers.get('idempotent-replayed')).toBe('true');
    expect((await queryRows(t.databaseUrl, 'select id from project_trade where name = $1', ['Idem in flight'])).length).toBe(1);
  });

  it('replays across instances: a retry sent to another instance writes no second row', async () => {
    const key = randomUUID();
    const first = await createProject('idem instances', key, t.url);
    const retry = await createProject('idem instances', key, second.url);
    expect([retry.status, retry.headers.get('idempotent-replayed'), retry.body.project.id]).toEqual([201, 'true', first.body.project.id]);
    expect(await projectsNamed('idem instances')).toBe(1);
  });

  it('replays a 204 of a DELETE', async () => {
    const projectId = (await createProject('idem delete')).body.project.id;
    const trade = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, { token: architect, body: { name: 'Gone', number: '80', short_name: 'GO' } });
    const key = randomUUID();
    const del = () => request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${trade.body.trade.id}`, { token: architect, headers: { 'Idempotency-Key': key } });
    expect((await del()).status).toBe(204);
    const again = await del();
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([204, 'true']);
  });

  it('refuses a key longer than 255 characters, or with characters a header cannot carry unchanged', async () => {
    for (const key of ['k'.repeat(256), 'with space']) {
      const res = await createProject('idem bad key', key);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
    }
    expect(await projectsNamed('idem bad key')).toBe(0);
  });

  it('leaves a write without a key as it was: the same body twice makes two projects', async () => {
    expect((await createProject('idem none')).status).toBe(201);
    expect((await createProject('idem none')).status).toBe(201);
    expect(await projectsNamed('idem none')).toBe(2);
  });

  it('keeps answers per caller: another caller\'s same key is another request', async () => {
    const key = randomUUID();
    const other = await tokenFor(t.url, 'other@demo.test');
    expect((await createProject('idem callers', key)).status).toBe(201);
    const theirs = await request(t.url, 'POST', `${P}/projects`, { token: other, body: projectBody('idem callers'), headers: { 'Idempotency-Key': key } });
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('Idempotency-Key on a body nested too deeply', () => {
  // 20,000 levels, as the hostile client of issue 31 sent it: the key's hash recursed over it and overflowed the stack (500).
  const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  const headers = () => ({ 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() });

  it('answers 400 `The request body is nested too deeply` on REST, with or without a key, and stores nothing', async () => {
    for (const h of [headers(), { 'Content-Type': 'application/json' }]) {
      const res = await request(t.url, 'POST', `${P}/projects`, { token: architect, raw: deep(20_000), headers: h });
      expect([res.status, res.body]).toEqual([400, { code: 400, message: 'The request body is nested too deeply' }]);
    }
  });

  it('answers 400 BAD_USER_INPUT in GraphQL\'s shape to a mutation whose variables nest 20,000 deep, with a key', async () => {
    const raw = `{"query":"mutation($i: CreateProjectInput!) { createProject(input: $i) { project { id } } }","variables":{"i":${deep(20_000)}}}`;
    const res = await request(t.url, 'POST', '/graphql', { token: architect, raw, headers: headers() });
    expect([res.status, res.body]).toEqual([400, { errors: [{ message: 'The request body is nested too deeply', extensions: { code: 'BAD_USER_INPUT' } }] }]);
  });

  it('still serves a body as deep as the interface needs, under its key', async () => {
    const key = randomUUID();
    expect((await createProject('idem nested ok', key)).status).toBe(201);
    expect((await createProject('idem nested ok', key)).headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('Idempotency-Key answers expire', () => {
  let short: TestApp;
  beforeAll(async () => {
    short = await startTestApp({ IDEMPOTENCY_KEY_TTL_SECONDS: '1', AUTH_ISSUER: t.url }, undefined, { database: t.databaseUrl });
  });
  afterAll(() => short?.close());

  it('runs a request again once its key is past IDEMPOTENCY_KEY_TTL_SECONDS', async () => {
    const key = randomUUID();
    expect((await createProject('idem expiry', key, short.url)).status).toBe(201);
    expect((await createProject('idem expiry', key, short.url)).headers.get('idempotent-replayed')).toBe('true');
    await new Promise((r) => setTimeout(r, 1100));
    const later = await createProject('idem expiry', key, short.url);
    expect([later.status, later.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(await projectsNamed('idem expiry')).toBe(2);
  });
});

describe('Idempotency-Key on GraphQL mutations', () => {
  const CREATE_TRADE = 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id name } } }';

  it('replays a mutation sent again with its key, writing nothing', async () => {
    const key = randomUUID();
    const vars = { p: PRJ.residence, i: { name: 'Idem GraphQL', number: '81', shortName: 'IG' } };
    const first = await gql(t.url, architect, CREATE_TRADE, vars, { headers: { 'Idempotency-Key': key } });
    const retry = await gql(second.url, architect, CREATE_TRADE, vars, { headers: { 'Idempotency-Key': key } });
    expect(first.body.errors).toBeUndefined();
    expect([retry.text, retry.headers.get('idempotent-replayed')]).toEqual([first.text, 'true']);
    expect((await queryRows(t.databaseUrl, 'select id from project_trade where name = $1', ['Idem GraphQL'])).length).toBe(1);
  });

  it('keeps nothing of a mutation that answered errors: its writes roll back, data is null, the key runs again', async () => {
    const { projectId, tradeId } = await projectWithTemplate('idem graphql errors');
    const key = randomUUID();
    // The first field writes, the second is refused (the trade is in use): with a key, nothing of the request stays.
    const two = `mutation($p: ID!, $t: ID!) {
      ok: createProjectTrade(projectId: $p, input: { name: "Idem half", number: "82", shortName: "IH" }) { trade { id } }
      clash: deleteProjectTrade(projectId: $p, tradeId: $t) { deletedTradeId } }`;
    const res = await gql(t.url, architect, two, { p: projectId, t: tradeId }, { headers: { 'Idempotency-Key': key } });
    expect(res.body.data).toBeNull();
    expect(res.body.errors[0].extensions.code).toBe('CONFLICT');
    expect((await queryRows(t.databaseUrl, 'select id from project_trade where name = $1', ['Idem half'])).length).toBe(0);
    const again = await gql(t.url, architect, two, { p: projectId, t: tradeId }, { headers: { 'Idempotency-Key': key } });
    expect([again.body.data, again.headers.get('idempotent-replayed')]).toEqual([null, null]);
  });

  it('leaves queries alone: a key on a query is not stored', async () => {
    const key = randomUUID();
    await gql(t.url, architect, '{ me { id } }', undefined, { headers: { 'Idempotency-Key': key } });
    expect(await queryRows(t.databaseUrl, 'select key from idempotency_key where key = $1', [key])).toEqual([]);
  });
});

describe('a write whose answer was lost on the way', () => {
  it('is answered on retry with the original answer: one project, one invitation, one credit', async () => {
    const proxy = await startCuttingProxy(t.url);
    try {
      const projectKey = randomUUID();
      await expect(createProject('idem cut', projectKey, proxy.url)).rejects.toThrow();
      proxy.cutting = false;
      const retried = await createProject('idem cut', projectKey, proxy.url);
      expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
      expect(await projectsNamed('idem cut')).toBe(1);

      const projectId = retried.body.project.id;
      const template = await request(t.url, 'POST', `${P}/projects/${projectId}/templates`, { token: architect, body: { trade_id: await tradeOf(projectId) } });
      expect(template.status).toBe(201);
      const templateId = template.body.template.id;
      const inviteKey = randomUUID();
      const invite = (url: string) => request(url, 'POST', `${P}/projects/${projectId}/templates/${templateId}/contractors`, {
        token: architect, body: { contractors: [{ name: 'Idem Cut SARL', email: 'idem-cut@example.test' }] }, headers: { 'Idempotency-Key': inviteKey },
      });
      proxy.cutting = true;
      await expect(invite(proxy.url)).rejects.toThrow();
      proxy.cutting = false;
      const again = await invite(proxy.url);
      expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
      expect(proxy.cut).toBe(2);
      const documents = await queryRows<{ id: string }>(t.databaseUrl, 'select id from document where template_id = $1', [templateId]);
      expect(documents.length).toBe(1);
      const credits = await queryRows(t.databaseUrl, "select id from credit_ledger_entry where kind = 'INVITATION' and reference_id = $1", [documents[0].id]);
      expect(credits.length).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

/** A new project with a template on its first trade (which the template then keeps in use). */
async function projectWithTemplate(name: string): Promise<{ projectId: string; tradeId: string; templateId: string }> {
  const projectId = (await createProject(name)).body.project.id;
  const tradeId = await tradeOf(projectId);
  const template = await request(t.url, 'POST', `${P}/projects/${projectId}/templates`, { token: architect, body: { trade_id: tradeId } });
  if (template.status !== 201) throw new Error(`template not created: ${template.status} ${template.text}`);
  return { projectId, tradeId, templateId: template.body.template.id };
}

async function tradeOf(projectId: string): Promise<string> {
  const res = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
  return res.body.trades[0].id;
}
