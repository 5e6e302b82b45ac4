import { Template } from '../entities';
import { DEMO_ARCHITECT_CALLER, DEMO_IDS } from '../../seed/demo-data';
import { ProjectTradeService } from './project-trade.service';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const P = '/api/svc/v1';
const PRJ = DEMO_IDS.projects;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UNKNOWN = '0b7f4a52-3c1d-4e8e-9a51-2f6d7c8e9a10';
const TRADE_KEYS = ['comment', 'created_at', 'id', 'name', 'number', 'project_id', 'short_name', 'updated_at'];

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

/** A fresh project of Atelier Demo (standard trade list: 8 trades), created through the API. */
async function newProject(name = 'Trades project'): Promise<string> {
  const res = await request(t.url, 'POST', `${P}/projects`, {
    token: architect,
    body: { name, construction_type: 'office', managers: [{ id: DEMO_IDS.users.architect }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF' },
  });
  expect(res.status).toBe(201);
  return res.body.project.id;
}

async function newTrade(projectId: string, body: Record<string, unknown> = { name: 'Serrurerie', number: '09', short_name: 'SE' }) {
  const res = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, { token: architect, body });
  expect(res.status).toBe(201);
  return res.body.trade as Record<string, unknown> & { id: string };
}

async function archive(projectId: string) {
  expect((await request(t.url, 'PUT', `${P}/projects/${projectId}/archive`, { token: architect })).status).toBe(200);
}

describe('GET /api/svc/v1/projects/{projectId}/trades (#6)', () => {
  it('answers the project trades by number, each with exactly the read-form fields', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/trades`, { token: architect });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['trades']);
    expect(res.body.trades.map((x: { number: string }) => x.number)).toEqual(['01', '02', '03', '04', '05', '06', '07', '08']);
    const first = res.body.trades[0];
    expect(Object.keys(first).sort()).toEqual(TRADE_KEYS);
    expect(first).toEqual({
      id: DEMO_IDS.projectTrades.residence['01'], number: '01', name: 'Gros œuvre', short_name: 'GO', comment: null,
      project_id: PRJ.residence, created_at: expect.stringMatching(TIMESTAMP), updated_at: expect.stringMatching(TIMESTAMP),
    });
  });

  it('orders by number whatever the order of creation', async () => {
    const projectId = await newProject();
    await newTrade(projectId, { name: 'Zinguerie', number: '10', short_name: 'ZI' });
    await newTrade(projectId, { name: 'Étanchéité', number: '00', short_name: 'ET' });
    const res = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    expect(res.body.trades.map((x: { number: string }) => x.number)).toEqual(['00', '01', '02', '03', '04', '05', '06', '07', '08', '10']);
  });

  it('still answers the trades of an archived project', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.archivedHouse}/trades`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.trades).toHaveLength(8);
  });

  it('answers 404 for an unknown project', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${UNKNOWN}/trades`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Project not found' });
  });

  it('answers 404 for a project of another organization, never its trades', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/trades`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Project not found' });
    const own = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/trades`, { token: other });
    expect(own.status).toBe(200);
    expect(own.body.trades).toHaveLength(3);
  });

  it('answers 400 for a project id that is not a UUID', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/12/trades`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'projectId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/trades`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(401);
  });
});

describe('POST /api/svc/v1/projects/{projectId}/trades (#7)', () => {
  it('creates the trade: 201 with the trade, comment null, listed afterwards', async () => {
    const projectId = await newProject();
    const res = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, {
      token: architect, body: { name: 'Serrurerie', number: '09', short_name: 'SE' },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['trade']);
    expect(Object.keys(res.body.trade).sort()).toEqual(TRADE_KEYS);
    expect(res.body.trade).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), number: '09', name: 'Serrurerie', short_name: 'SE', comment: null,
      project_id: projectId, created_at: expect.stringMatching(TIMESTAMP), updated_at: expect.stringMatching(TIMESTAMP),
    });
    const list = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    expect(list.body.trades[8]).toEqual(res.body.trade);
  });

  it('requires name, number and short_name', async () => {
    const projectId = await newProject();
    const res = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, { token: architect, body: {} });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400, message: 'The request is not valid',
      errors: [
        { field: 'name', message: 'is required' },
        { field: 'number', message: 'is required' },
        { field: 'short_name', message: 'is required' },
      ],
    });
  });

  it('refuses comment on create (400 on field comment), and creates nothing', async () => {
    const projectId = await newProject();
    const res = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, {
      token: architect, body: { name: 'Serrurerie', number: '09', short_name: 'SE', comment: 'Portails' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'comment', message: 'is not accepted by this operation' }]);
    const list = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    expect(list.body.trades).toHaveLength(8);
  });

  it('refuses fields that are not strings or are empty', async () => {
    const projectId = await newProject();
    const res = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, {
      token: architect, body: { name: '', number: 9, short_name: null },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'name', message: 'must not be empty' },
      { field: 'number', message: 'must be a string' },
      { field: 'short_name', message: 'is required' },
    ]);
  });

  it('refuses an unknown field', async () => {
    const projectId = await newProject();
    const res = await request(t.url, 'POST', `${P}/projects/${projectId}/trades`, {
      token: architect, body: { name: 'Serrurerie', number: '09', short_name: 'SE', budget: 3 },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'budget', message: 'is not accepted by this operation' }]);
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/trades`, {
      token: architect, raw: '{"name": "x",', headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request body is not valid JSON' });
  });

  it('answers 409 below an archived project', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.archivedHouse}/trades`, {
      token: architect, body: { name: 'Serrurerie', number: '09', short_name: 'SE' },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, message: 'The project is archived: it is read-only' });
  });

  it('answers 404 for an unknown project and for another organization\'s project, creating nothing', async () => {
    const body = { name: 'Serrurerie', number: '09', short_name: 'SE' };
    const unknown = await request(t.url, 'POST', `${P}/projects/${UNKNOWN}/trades`, { token: architect, body });
    expect(unknown.status).toBe(404);
    const foreign = await request(t.url, 'POST', `${P}/projects/${PRJ.cabinetSudHall}/trades`, { token: architect, body });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    const theirs = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/trades`, { token: other });
    expect(theirs.body.trades.map((x: { name: string }) => x.name)).not.toContain('Serrurerie');
  });

  it('answers 400 for a project id that is not a UUID', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/not-a-uuid/trades`, {
      token: architect, body: { name: 'Serrurerie', number: '09', short_name: 'SE' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'projectId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/trades`, { body: { name: 'S', number: '09', short_name: 'SE' } });
    expect(res.status).toBe(401);
  });
});

describe('PUT /api/svc/v1/projects/{projectId}/trades/{tradeId} (#8)', () => {
  it('updates name, number, short_name and comment: 200 with the trade', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    const res = await request(t.url, 'PUT', `${P}/projects/${projectId}/trades/${trade.id}`, {
      token: architect, body: { name: 'Serrurerie – métallerie', number: '9b', short_name: 'SM', comment: 'Portails compris' },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['trade']);
    expect(res.body.trade).toEqual({
      id: trade.id, number: '9b', name: 'Serrurerie – métallerie', short_name: 'SM', comment: 'Portails compris',
      project_id: projectId, created_at: trade.created_at, updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.trade.updated_at > (trade.updated_at as string)).toBe(true);
    const list = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    expect(list.body.trades.find((x: { id: string }) => x.id === trade.id)).toEqual(res.body.trade);
  });

  it('keeps the comment when it is left out and removes it when null', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    const url = `${P}/projects/${projectId}/trades/${trade.id}`;
    await request(t.url, 'PUT', url, { token: architect, body: { name: 'A', number: '09', short_name: 'A', comment: 'Note' } });
    const kept = await request(t.url, 'PUT', url, { token: architect, body: { name: 'B', number: '09', short_name: 'B' } });
    expect(kept.status).toBe(200);
    expect(kept.body.trade).toMatchObject({ name: 'B', comment: 'Note' });
    const cleared = await request(t.url, 'PUT', url, { token: architect, body: { name: 'B', number: '09', short_name: 'B', comment: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.trade.comment).toBeNull();
  });

  it('updates a trade copied from the trade list', async () => {
    const projectId = await newProject();
    const list = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    const copied = list.body.trades[0];
    const res = await request(t.url, 'PUT', `${P}/projects/${projectId}/trades/${copied.id}`, {
      token: architect, body: { name: 'Gros œuvre – maçonnerie', number: '01', short_name: 'GOM' },
    });
    expect(res.status).toBe(200);
    expect(res.body.trade).toMatchObject({ id: copied.id, name: 'Gros œuvre – maçonnerie', short_name: 'GOM', comment: null });
  });

  it('requires name, number and short_name', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    const res = await request(t.url, 'PUT', `${P}/projects/${projectId}/trades/${trade.id}`, { token: architect, body: { comment: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'name', message: 'is required' },
      { field: 'number', message: 'is required' },
      { field: 'short_name', message: 'is required' },
    ]);
  });

  it('refuses a comment that is not a string, and an unknown field', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    const res = await request(t.url, 'PUT', `${P}/projects/${projectId}/trades/${trade.id}`, {
      token: architect, body: { name: 'A', number: '09', short_name: 'A', comment: 12, project_id: PRJ.residence },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'project_id', message: 'is not accepted by this operation' },
      { field: 'comment', message: 'must be a string' },
    ]);
  });

  it('answers 400 for malformed JSON and for non-UUID ids', async () => {
    const bad = await request(t.url, 'PUT', `${P}/projects/${PRJ.residence}/trades/${DEMO_IDS.projectTrades.residence['08']}`, {
      token: architect, raw: '{', headers: { 'Content-Type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('The request body is not valid JSON');
    const ids = await request(t.url, 'PUT', `${P}/projects/x/trades/y`, { token: architect, body: { name: 'A', number: '1', short_name: 'A' } });
    expect(ids.status).toBe(400);
    expect(ids.body.errors).toEqual(expect.arrayContaining([{ field: 'projectId', message: 'must be a UUID' }, { field: 'tradeId', message: 'must be a UUID' }]));
    expect(ids.body.errors).toHaveLength(2);
  });

  it('answers 404 for an unknown trade and for a trade of another project of the caller', async () => {
    const projectId = await newProject();
    const body = { name: 'A', number: '01', short_name: 'A' };
    const unknown = await request(t.url, 'PUT', `${P}/projects/${projectId}/trades/${UNKNOWN}`, { token: architect, body });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, message: 'Trade not found' });
    const elsewhere = await request(t.url, 'PUT', `${P}/projects/${projectId}/trades/${DEMO_IDS.projectTrades.residence['01']}`, { token: architect, body });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ code: 404, message: 'Trade not found' });
    const residence = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/trades`, { token: architect });
    expect(residence.body.trades[0].name).toBe('Gros œuvre');
  });

  it('answers 404 for another organization\'s project and trade, leaving the trade untouched', async () => {
    const tradeId = DEMO_IDS.projectTrades.cabinetSudHall['01'];
    const res = await request(t.url, 'PUT', `${P}/projects/${PRJ.cabinetSudHall}/trades/${tradeId}`, {
      token: architect, body: { name: 'Pris', number: '01', short_name: 'P' },
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Project not found' });
    const theirs = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/trades`, { token: other });
    expect(theirs.body.trades[0]).toMatchObject({ id: tradeId, name: 'Voirie et réseaux divers' });
  });

  it('answers 409 below an archived project', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    await archive(projectId);
    const res = await request(t.url, 'PUT', `${P}/projects/${projectId}/trades/${trade.id}`, {
      token: architect, body: { name: 'Changed', number: '09', short_name: 'SE' },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, message: 'The project is archived: it is read-only' });
    const list = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    expect(list.body.trades.find((x: { id: string }) => x.id === trade.id).name).toBe('Serrurerie');
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'PUT', `${P}/projects/${PRJ.residence}/trades/${DEMO_IDS.projectTrades.residence['01']}`, {
      body: { name: 'A', number: '01', short_name: 'A' },
    });
    expect(res.status).toBe(401);
  });
});

describe('DELETE /api/svc/v1/projects/{projectId}/trades/{tradeId} (#9)', () => {
  it('deletes a trade without templates: 204, no body, gone from the list', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    const res = await request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${trade.id}`, { token: architect });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const list = await request(t.url, 'GET', `${P}/projects/${projectId}/trades`, { token: architect });
    expect(list.body.trades.map((x: { id: string }) => x.id)).not.toContain(trade.id);
    const again = await request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${trade.id}`, { token: architect });
    expect(again.status).toBe(404);
  });

  it('answers 409 while the trade still has templates, and keeps it', async () => {
    const tradeId = DEMO_IDS.projectTrades.residence['01'];
    const res = await request(t.url, 'DELETE', `${P}/projects/${PRJ.residence}/trades/${tradeId}`, { token: architect });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, message: 'The trade still has templates: delete them first' });
    const list = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/trades`, { token: architect });
    expect(list.body.trades.map((x: { id: string }) => x.id)).toContain(tradeId);
  });

  it('answers 409 for a trade of a new project once a template uses it', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    const em = t.orm.em.fork();
    em.create(Template, { project: projectId, trade: trade.id, budget: 1000 });
    await em.flush();
    const res = await request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${trade.id}`, { token: architect });
    expect(res.status).toBe(409);
  });

  it('answers 409 below an archived project', async () => {
    const projectId = await newProject();
    const trade = await newTrade(projectId);
    await archive(projectId);
    const res = await request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${trade.id}`, { token: architect });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('The project is archived: it is read-only');
  });

  it('answers 404 for an unknown trade and a trade of another project', async () => {
    const projectId = await newProject();
    const unknown = await request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${UNKNOWN}`, { token: architect });
    expect(unknown.status).toBe(404);
    const elsewhere = await request(t.url, 'DELETE', `${P}/projects/${projectId}/trades/${DEMO_IDS.projectTrades.residence['08']}`, { token: architect });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ code: 404, message: 'Trade not found' });
    const residence = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/trades`, { token: architect });
    expect(residence.body.trades.map((x: { id: string }) => x.id)).toContain(DEMO_IDS.projectTrades.residence['08']);
  });

  it('answers 404 for another organization\'s trade and deletes nothing', async () => {
    const tradeId = DEMO_IDS.projectTrades.cabinetSudHall['03'];
    const res = await request(t.url, 'DELETE', `${P}/projects/${PRJ.cabinetSudHall}/trades/${tradeId}`, { token: architect });
    expect(res.status).toBe(404);
    const theirs = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/trades`, { token: other });
    expect(theirs.body.trades.map((x: { id: string }) => x.id)).toContain(tradeId);
  });

  it('answers 400 for ids that are not UUIDs', async () => {
    const res = await request(t.url, 'DELETE', `${P}/projects/${PRJ.residence}/trades/42`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'tradeId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'DELETE', `${P}/projects/${PRJ.residence}/trades/${DEMO_IDS.projectTrades.residence['08']}`);
    expect(res.status).toBe(401);
  });
});

describe('ProjectTradeService.tradesByProject', () => {
  it('answers the trades of many projects in one statement, none for projects the caller may not see', async () => {
    const service = new ProjectTradeService({
      em: t.orm.em.fork(), config: t.config,
      caller: DEMO_ARCHITECT_CALLER,
    });
    const ids = [PRJ.residence, PRJ.school, PRJ.nordOffices, PRJ.cabinetSudHall, UNKNOWN];
    const { result, statements } = await t.queries.measure(() => service.tradesByProject(ids));
    expect(statements).toBe(1);
    expect([...result.keys()]).toEqual(ids);
    expect(result.get(PRJ.residence)!.map((x) => x.number)).toEqual(['01', '02', '03', '04', '05', '06', '07', '08']);
    expect(result.get(PRJ.school)).toHaveLength(5);
    expect(result.get(PRJ.nordOffices)).toHaveLength(8);
    expect(result.get(PRJ.cabinetSudHall)).toEqual([]);
    expect(result.get(UNKNOWN)).toEqual([]);
    expect(result.get(PRJ.school)![0]).toMatchObject({ projectId: PRJ.school, number: '01', name: 'Désamiantage', shortName: 'DES', comment: null });
  });
});
