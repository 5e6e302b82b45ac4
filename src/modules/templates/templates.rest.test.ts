import { DEMO_ARCHITECT_CALLER, DEMO_IDS } from '../../seed/demo-data';
import { DocumentService } from '../documents/document.service';
import type { ServiceContext } from '../../platform/service-context';
import { TemplateService } from './template.service';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

let t: TestApp;
let architect: string;
let other: string;

const P = '/api/svc/v1';
const { projects: PRJ, templates: TPL, documents: DOC, contractors: CTR, projectTrades: TRD } = DEMO_IDS;
const UNKNOWN = '0b0b0b0b-0000-4000-8000-000000000000';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const RECORD_FIELDS = [
  'id', 'project_id', 'is_slice', 'slice', 'closed_at', 'version_saved', 'response_type', 'budgets', 'itemised_sheet', 'trade',
  'end_of_offer_date', 'consultation_started_at', 'fold_opened', 'favourite_consultation_id', 'selected_consultation_id', 'stats',
  'created_at', 'updated_at',
].sort();

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return t.orm.em.fork().getConnection().execute<T[]>(query, params);
}

const addTemplate = (projectId: string, body: unknown, token = architect) => request(t.url, 'POST', `${P}/projects/${projectId}/templates`, { token, body });

/** Counts the SQL statements of one GET request. */
async function statementsOf(path: string): Promise<number> {
  const { result, statements } = await t.queries.measure(() => request(t.url, 'GET', path, { token: architect }));
  expect(result.status).toBe(200);
  return statements;
}

/** Adds an answered version to a document, as a contractor's answer would. */
async function answer(documentId: string): Promise<void> {
  await sql(`insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
    values (gen_random_uuid(), now(), now(), ?, 1, 'ANSWERED', 1000, 0, false, false, now())`, [documentId]);
}

describe('GET /api/svc/v1/projects/{projectId}/templates (#10)', () => {
  it('lists the templates and slices of the project, oldest first, with exactly the fields of the template record', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates`, { token: architect });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['templates']);
    expect(res.body.templates.map((x: { id: string }) => x.id)).toEqual([
      TPL.residenceGrosOeuvre, TPL.residenceGrosOeuvreTranche1, TPL.residenceGrosOeuvreTranche2, TPL.residenceCharpente,
      TPL.residenceElectricite, TPL.residencePlomberie,
    ]);
    for (const record of res.body.templates) expect(Object.keys(record).sort()).toEqual(RECORD_FIELDS);
    expect(res.body.templates[0]).toEqual({
      id: TPL.residenceGrosOeuvre,
      project_id: PRJ.residence,
      is_slice: false,
      slice: null,
      closed_at: null,
      version_saved: 3,
      response_type: 'DPGF',
      budgets: { value: 120000 },
      itemised_sheet: { version: 1, is_draft: false, has_additional_services: false },
      trade: { id: TRD.residence['01'], name: 'Gros œuvre', number: '01', short_name: 'GO' },
      end_of_offer_date: '2027-01-29T12:00:00.000000Z',
      consultation_started_at: '2026-09-14T08:00:00.000000Z',
      fold_opened: false,
      favourite_consultation_id: DOC.residenceGoDurand,
      selected_consultation_id: DOC.residenceGoPetit,
      // Selected offer 124800 (Petit) - budget 120000; Durand and Petit answered, Moreau in revision, Durand Rénovation pending.
      stats: {
        delta_budget: 4800, contractors: 4, contractors_answers: 2, contractors_pending: 1, contractors_declined: 0,
        contractors_in_revision: 1, contractors_intention_is_no: 0, contractors_intention_is_maybe: 1,
      },
      created_at: '2026-09-10T09:00:00.000000Z',
      updated_at: '2026-09-10T09:00:00.000000Z',
    });
  });

  it('gives a slice its name, and its own budget and stats', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates`, { token: architect });
    const tranche1 = res.body.templates.find((x: { id: string }) => x.id === TPL.residenceGrosOeuvreTranche1);
    expect(tranche1).toMatchObject({
      is_slice: true, slice: 'Tranche 1', budgets: { value: 45000.5 }, favourite_consultation_id: null, selected_consultation_id: null,
      trade: { id: TRD.residence['01'] },
      // Lowest offer 43800 - 250.5 = 43549.5, budget 45000.5.
      stats: {
        delta_budget: -1451, contractors: 2, contractors_answers: 1, contractors_pending: 0, contractors_declined: 1,
        contractors_in_revision: 0, contractors_intention_is_no: 1, contractors_intention_is_maybe: 0,
      },
    });
    const plomberie = res.body.templates.find((x: { id: string }) => x.id === TPL.residencePlomberie);
    expect(plomberie.stats).toMatchObject({ delta_budget: 0, contractors: 2, contractors_in_revision: 1, contractors_pending: 1, contractors_intention_is_no: 1 });
  });

  it('answers the same body under /svc/v1', async () => {
    const api = await request(t.url, 'GET', `${P}/projects/${PRJ.school}/templates`, { token: architect });
    const alias = await request(t.url, 'GET', `/svc/v1/projects/${PRJ.school}/templates`, { token: architect });
    expect(alias.status).toBe(200);
    expect(alias.body).toEqual(api.body);
  });

  it('lists the templates of an archived project, and an empty list for a project without templates', async () => {
    const archived = await request(t.url, 'GET', `${P}/projects/${PRJ.archivedHouse}/templates`, { token: architect });
    expect(archived.body.templates.map((x: { id: string; closed_at: string }) => [x.id, x.closed_at])).toEqual([[TPL.archivedHouseGrosOeuvre, '2026-05-04T12:00:00.000000Z']]);
    const created = await request(t.url, 'POST', `${P}/projects`, { token: architect, body: {
      name: 'Sans lots', construction_type: 'office', managers: [{ id: DEMO_IDS.users.architect }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF',
    } });
    expect(created.status).toBe(201);
    const empty = await request(t.url, 'GET', `${P}/projects/${created.body.project.id}/templates`, { token: architect });
    expect(empty.body).toEqual({ templates: [] });
  });

  it('pages with limit and cursor, in the same order, with next_cursor and total_count', async () => {
    const all = (await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates`, { token: architect })).body.templates;
    const first = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates?limit=4`, { token: architect });
    expect(first.body.templates).toEqual(all.slice(0, 4));
    expect(first.body.total_count).toBe(all.length);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates?limit=4&cursor=${first.body.next_cursor}`, { token: architect });
    expect(second.body.templates).toEqual(all.slice(4));
    expect(second.body.next_cursor).toBeNull();
  });

  it('rejects a bad page size or cursor with 400', async () => {
    const limit = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates?limit=0`, { token: architect });
    expect(limit.status).toBe(400);
    expect(limit.body.errors).toEqual([{ field: 'limit', message: 'must be a whole number from 1 to 500' }]);
    const cursor = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates?limit=2&cursor=garbage`, { token: architect });
    expect(cursor.status).toBe(400);
    expect(cursor.body.errors).toEqual([{ field: 'cursor', message: 'is not a cursor given by this service' }]);
    const unknown = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates?page=2`, { token: architect });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'page', message: 'is not accepted by this operation' }]);
  });

  it('runs the same number of SQL statements whatever the number of templates', async () => {
    const school = await statementsOf(`${P}/projects/${PRJ.school}/templates`);
    const residence = await statementsOf(`${P}/projects/${PRJ.residence}/templates`);
    expect(residence).toBe(school);
    expect(residence).toBeLessThanOrEqual(6);
  });

  it('answers 400 for a project id that is not a UUID', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/not-a-uuid/templates`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'projectId', message: 'must be a UUID' }] });
  });

  it('answers 404 for an unknown project and for another organization\'s project, never its data', async () => {
    const unknown = await request(t.url, 'GET', `${P}/projects/${UNKNOWN}/templates`, { token: architect });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, message: 'Project not found' });
    const foreign = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/templates`, { token: architect });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    const own = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/templates`, { token: other });
    expect(own.body.templates.map((x: { id: string }) => x.id)).toEqual([TPL.cabinetSudCharpente]);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(401);
  });
});

describe('POST /api/svc/v1/projects/{projectId}/templates (#11)', () => {
  it('creates the trade\'s template when it has none, then slices named "Tranche N" or slice_name', async () => {
    const trade = TRD.residence['03'];
    const main = await addTemplate(PRJ.residence, { trade_id: trade, budget: 15000.456 });
    expect(main.status).toBe(201);
    expect(Object.keys(main.body)).toEqual(['template']);
    expect(Object.keys(main.body.template).sort()).toEqual(RECORD_FIELDS);
    expect(main.body.template).toMatchObject({
      project_id: PRJ.residence, is_slice: false, slice: null, closed_at: null, version_saved: 0, response_type: 'DPGF',
      budgets: { value: 15000.46 }, itemised_sheet: { version: 1, is_draft: true, has_additional_services: false },
      trade: { id: trade, name: 'Couverture', number: '03', short_name: 'CO' }, end_of_offer_date: '2027-01-29T12:00:00.000000Z',
      consultation_started_at: null, fold_opened: false, favourite_consultation_id: null, selected_consultation_id: null,
      stats: {
        delta_budget: 0, contractors: 0, contractors_answers: 0, contractors_pending: 0, contractors_declined: 0,
        contractors_in_revision: 0, contractors_intention_is_no: 0, contractors_intention_is_maybe: 0,
      },
    });
    expect(main.body.template.created_at).toMatch(TIMESTAMP);

    const first = await addTemplate(PRJ.residence, { trade_id: trade });
    expect(first.status).toBe(201);
    expect(first.body.template).toMatchObject({ is_slice: true, slice: 'Tranche 1', budgets: { value: 0 }, trade: { id: trade } });
    const named = await addTemplate(PRJ.residence, { trade_id: trade, slice_name: 'Bâtiment B', budget: 0 });
    expect(named.body.template).toMatchObject({ is_slice: true, slice: 'Bâtiment B' });
    const third = await addTemplate(PRJ.residence, { trade_id: trade });
    expect(third.body.template.slice).toBe('Tranche 3');

    const rows = await sql<{ id: string; parent_id: string | null }>('select id, parent_id from template where trade_id = ? order by created_at', [trade]);
    expect(rows).toEqual([
      { id: main.body.template.id, parent_id: null },
      { id: first.body.template.id, parent_id: main.body.template.id },
      { id: named.body.template.id, parent_id: main.body.template.id },
      { id: third.body.template.id, parent_id: main.body.template.id },
    ]);
    const list = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates`, { token: architect });
    expect(list.body.templates.slice(-4)).toEqual([main.body.template, first.body.template, named.body.template, third.body.template].map((x) => ({ ...x })));
  });

  it('numbers a slice after the existing slices of the trade', async () => {
    const res = await addTemplate(PRJ.residence, { trade_id: TRD.residence['01'] });
    expect(res.status).toBe(201);
    expect(res.body.template).toMatchObject({ is_slice: true, slice: 'Tranche 3', trade: { id: TRD.residence['01'] } });
  });

  it('skips a "Tranche N" name still in use after a slice was deleted', async () => {
    const trade = TRD.residence['08'];
    const main = await addTemplate(PRJ.residence, { trade_id: trade });
    const t1 = await addTemplate(PRJ.residence, { trade_id: trade });
    const t2 = await addTemplate(PRJ.residence, { trade_id: trade });
    expect([t1.body.template.slice, t2.body.template.slice]).toEqual(['Tranche 1', 'Tranche 2']);
    expect((await request(t.url, 'DELETE', `${P}/projects/${PRJ.residence}/templates/${t1.body.template.id}`, { token: architect })).status).toBe(204);
    const next = await addTemplate(PRJ.residence, { trade_id: trade });
    expect(next.body.template.slice).toBe('Tranche 3');
    expect(main.body.template.is_slice).toBe(false);
  });

  it('makes exactly one main template when several requests for a trade without template arrive at once', async () => {
    const trade = TRD.residence['05'];
    const results = await Promise.all(Array.from({ length: 6 }, () => addTemplate(PRJ.residence, { trade_id: trade })));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    const templates = results.map((r) => r.body.template);
    expect(templates.filter((x) => !x.is_slice)).toHaveLength(1);
    expect(templates.filter((x) => x.is_slice).map((x) => x.slice).sort()).toEqual(['Tranche 1', 'Tranche 2', 'Tranche 3', 'Tranche 4', 'Tranche 5']);
    const [{ mains }] = await sql<{ mains: string }>('select count(*) as mains from template where trade_id = ? and parent_id is null', [trade]);
    expect(Number(mains)).toBe(1);
  });

  it('answers under /svc/v1 too', async () => {
    const res = await request(t.url, 'POST', `/svc/v1/projects/${PRJ.school}/templates`, { token: architect, body: { trade_id: TRD.school['05'] } });
    expect(res.status).toBe(201);
    expect(res.body.template).toMatchObject({ project_id: PRJ.school, is_slice: false, response_type: 'DPGF_QUOTE', trade: { name: 'Revêtements de sols' } });
  });

  it.each([
    ['trade_id is missing', {}, [{ field: 'trade_id', message: 'is required' }]],
    ['trade_id is not a UUID', { trade_id: 'lot-01' }, [{ field: 'trade_id', message: 'must be a UUID' }]],
    ['budget is negative', { trade_id: TRD.residence['04'], budget: -1 }, [{ field: 'budget', message: 'must be at least 0' }]],
    ['budget is not a number', { trade_id: TRD.residence['04'], budget: '12' }, [{ field: 'budget', message: 'must be a number' }]],
    ['budget is too large', { trade_id: TRD.residence['04'], budget: 1e13 }, [{ field: 'budget', message: 'must be at most 999999999999.99' }]],
    ['slice_name is not a string', { trade_id: TRD.residence['04'], slice_name: 5 }, [{ field: 'slice_name', message: 'must be a string' }]],
    ['slice_name is empty', { trade_id: TRD.residence['04'], slice_name: '' }, [{ field: 'slice_name', message: 'must not be empty' }]],
    ['slice_name is too long', { trade_id: TRD.residence['04'], slice_name: 'x'.repeat(256) }, [{ field: 'slice_name', message: 'must be at most 255 characters long' }]],
    ['a field is unknown', { trade_id: TRD.residence['04'], name: 'x' }, [{ field: 'name', message: 'is not accepted by this operation' }]],
    ['trade_id is a trade of another project', { trade_id: TRD.school['01'] }, [{ field: 'trade_id', message: 'is not a trade of this project' }]],
    ['trade_id is another organization\'s trade', { trade_id: TRD.cabinetSudHall['01'] }, [{ field: 'trade_id', message: 'is not a trade of this project' }]],
  ])('answers 400 when %s', async (_rule, body, errors) => {
    const before = await sql<{ n: string }>('select count(*) as n from template');
    const res = await addTemplate(PRJ.residence, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors });
    expect(await sql<{ n: string }>('select count(*) as n from template')).toEqual(before);
  });

  it('answers 409 on an archived project and creates nothing', async () => {
    const res = await addTemplate(PRJ.archivedHouse, { trade_id: TRD.archivedHouse['02'] });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, message: 'The project is archived: it is read-only' });
    expect(await sql('select id from template where trade_id = ?', [TRD.archivedHouse['02']])).toEqual([]);
  });

  it('answers 404 for an unknown project and another organization\'s project', async () => {
    const unknown = await addTemplate(UNKNOWN, { trade_id: TRD.residence['04'] });
    expect(unknown.status).toBe(404);
    const foreign = await addTemplate(PRJ.cabinetSudHall, { trade_id: TRD.cabinetSudHall['01'] });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ code: 404, message: 'Project not found' });
    expect(await sql('select id from template where trade_id = ?', [TRD.cabinetSudHall['01']])).toEqual([]);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'POST', `${P}/projects/${PRJ.residence}/templates`, { body: { trade_id: TRD.residence['04'] } });
    expect(res.status).toBe(401);
  });
});

describe('GET /api/svc/v1/projects/{projectId}/templates/documents (#12)', () => {
  it('lists the templates with their contractors\' documents', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.school}/templates/documents`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.templates.map((x: { id: string }) => x.id).slice(0, 2)).toEqual([TPL.schoolDemolition, TPL.schoolMenuiseries]);
    const [demolition, menuiseries] = res.body.templates;
    expect(Object.keys(demolition).sort()).toEqual(['documents', 'id', 'is_slice', 'name', 'slice', 'trade']);
    expect(demolition).toMatchObject({
      id: TPL.schoolDemolition, name: 'Curage et démolition', is_slice: false, slice: null,
      trade: { id: TRD.school['02'], name: 'Curage et démolition', number: '02', short_name: 'DEM' },
    });
    expect(demolition.documents).toEqual([
      {
        id: DOC.schoolDemolitionPetit,
        contractor: { id: CTR.maconneriePetit, name: 'Maçonnerie Petit et Fils', information: { fiscal_number: null }, email: 'devis@maconnerie-petit.fr' },
        dce_downloaded_at: '2026-09-03T08:15:00.000000Z', intention: 'YES', state: 'ANSWERED',
        versions: [{ is_mandate: 'false', version: 1, sub_total: 26500, discount: 500, sent_at: '2026-10-01T10:40:00.000000Z', status: 'ANSWERED', has_files: true, has_dpgf: true }],
      },
      {
        id: DOC.schoolDemolitionMoreau,
        contractor: { id: CTR.btpMoreau, name: 'BTP Moreau', information: { fiscal_number: '79845612300028' }, email: 'contact@btp-moreau.fr' },
        dce_downloaded_at: '2026-09-04T13:30:00.000000Z', intention: 'MAYBE', state: 'ANSWERED',
        versions: [{ is_mandate: 'false', version: 1, sub_total: 29000, discount: 0, sent_at: '2026-10-02T17:05:00.000000Z', status: 'ANSWERED', has_files: true, has_dpgf: true }],
      },
    ]);
    expect(menuiseries.documents.map((d: { id: string; state: string }) => [d.id, d.state])).toEqual([
      [DOC.schoolMenuiserieBernard, 'IN_REVISION'], [DOC.schoolMenuiserieDurand, 'DECLINED'], [DOC.schoolMenuiserieDurandRenovation, 'PENDING'],
    ]);
  });

  it('names a slice after its trade and slice, and lists a template without documents with an empty list', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/documents`, { token: architect });
    const tranche2 = res.body.templates.find((x: { id: string }) => x.id === TPL.residenceGrosOeuvreTranche2);
    expect(tranche2).toMatchObject({ name: 'Gros œuvre - Tranche 2', is_slice: true, slice: 'Tranche 2' });
    expect(tranche2.documents.map((d: { id: string; state: string }) => [d.id, d.state])).toEqual([
      [DOC.residenceTranche2Moreau, 'PENDING'], [DOC.residenceTranche2DurandRenovation, 'PENDING'],
    ]);
    expect(res.body.templates.find((x: { slice: string }) => x.slice === 'Bâtiment B').documents).toEqual([]);
  });

  it('pages by template with limit and cursor', async () => {
    const first = await request(t.url, 'GET', `${P}/projects/${PRJ.school}/templates/documents?limit=1`, { token: architect });
    expect(first.body.templates.map((x: { id: string }) => x.id)).toEqual([TPL.schoolDemolition]);
    expect(first.body.total_count).toBeGreaterThanOrEqual(2);
    const second = await request(t.url, 'GET', `${P}/projects/${PRJ.school}/templates/documents?limit=1&cursor=${first.body.next_cursor}`, { token: architect });
    expect(second.body.templates.map((x: { id: string }) => x.id)).toEqual([TPL.schoolMenuiseries]);
  });

  it('answers the same body under /svc/v1', async () => {
    const api = await request(t.url, 'GET', `${P}/projects/${PRJ.nordOffices}/templates/documents`, { token: architect });
    const alias = await request(t.url, 'GET', `/svc/v1/projects/${PRJ.nordOffices}/templates/documents`, { token: architect });
    expect(api.body.templates[0].documents).toHaveLength(3);
    expect(alias.body).toEqual(api.body);
  });

  it('runs the same number of SQL statements whatever the number of templates and documents', async () => {
    const nord = await statementsOf(`${P}/projects/${PRJ.nordOffices}/templates/documents`);
    const residence = await statementsOf(`${P}/projects/${PRJ.residence}/templates/documents`);
    expect(residence).toBe(nord);
  });

  it('answers 400 for a malformed id, 404 for an unknown or another organization\'s project, 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${P}/projects/123/templates/documents`, { token: architect })).status).toBe(400);
    expect((await request(t.url, 'GET', `${P}/projects/${UNKNOWN}/templates/documents`, { token: architect })).status).toBe(404);
    const foreign = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/templates/documents`, { token: architect });
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain('Vercors');
    expect((await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/documents`)).status).toBe(401);
  });
});

describe('GET /api/svc/v1/projects/{projectId}/templates/{templateId} (#13)', () => {
  it('gives the template detail: id, name and the documents with contractor and versions in order', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvre}`, { token: architect });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['template']);
    expect(Object.keys(res.body.template)).toEqual(['id', 'name', 'documents']);
    expect(res.body.template.id).toBe(TPL.residenceGrosOeuvre);
    expect(res.body.template.name).toBe('Gros œuvre');
    const [durand, petit, moreau, renovation] = res.body.template.documents;
    expect(durand).toEqual({
      id: DOC.residenceGoDurand,
      contractor: { id: CTR.batimentsDurand, name: 'Bâtiments Durand SAS', information: { fiscal_number: '73282932000074' }, email: 'p.durand@batiments-durand.fr' },
      dce_downloaded_at: '2026-09-15T10:12:00.000000Z',
      intention: 'YES',
      state: 'ANSWERED',
      versions: [
        { is_mandate: 'false', version: 1, sub_total: 118000, discount: 1500, sent_at: '2026-10-06T16:20:00.000000Z', status: 'ANSWERED', has_files: true, has_dpgf: true },
        { is_mandate: 'false', version: 2, sub_total: 116500, discount: 1000, sent_at: '2026-10-27T11:05:00.000000Z', status: 'ANSWERED', has_files: true, has_dpgf: true },
      ],
    });
    expect(petit.versions).toEqual([{ is_mandate: 'true', version: 1, sub_total: 124800, discount: 0, sent_at: '2026-10-09T14:30:00.000000Z', status: 'ANSWERED', has_files: true, has_dpgf: true }]);
    expect(moreau).toMatchObject({ id: DOC.residenceGoMoreau, intention: 'MAYBE', state: 'IN_REVISION' });
    expect(moreau.versions.map((v: { version: number; status: string; has_files: boolean }) => [v.version, v.status, v.has_files])).toEqual([[1, 'ANSWERED', true], [2, 'IN_REVISION', false]]);
    expect(renovation).toEqual({
      id: DOC.residenceGoDurandRenovation,
      contractor: { id: CTR.durandRenovation, name: 'Durand Rénovation', information: { fiscal_number: '73282932000074' }, email: 'contact@durand-renovation.fr' },
      dce_downloaded_at: null, intention: null, state: 'PENDING', versions: [],
    });
  });

  it('gives a draft version a null sent_at and counts it as pending; names a slice "<trade> - <slice>"', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvreTranche2}`, { token: architect });
    expect(res.body.template.name).toBe('Gros œuvre - Tranche 2');
    expect(res.body.template.documents[0]).toMatchObject({
      id: DOC.residenceTranche2Moreau, state: 'PENDING',
      versions: [{ is_mandate: 'false', version: 1, sub_total: 36200, discount: 0, sent_at: null, status: 'DRAFT', has_files: false, has_dpgf: false }],
    });
  });

  it('answers a version without files with has_files and has_dpgf false', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceCharpente}`, { token: architect });
    const durand = res.body.template.documents.find((d: { id: string }) => d.id === DOC.residenceCharpenteDurand);
    expect(durand.versions).toEqual([{ is_mandate: 'false', version: 1, sub_total: 68900, discount: 900, sent_at: '2026-10-22T18:15:00.000000Z', status: 'ANSWERED', has_files: false, has_dpgf: false }]);
  });

  it('answers the same body under /svc/v1, and reads an archived project\'s template', async () => {
    const api = await request(t.url, 'GET', `${P}/projects/${PRJ.archivedHouse}/templates/${TPL.archivedHouseGrosOeuvre}`, { token: architect });
    const alias = await request(t.url, 'GET', `/svc/v1/projects/${PRJ.archivedHouse}/templates/${TPL.archivedHouseGrosOeuvre}`, { token: architect });
    expect(api.status).toBe(200);
    expect(api.body.template.documents.map((d: { id: string }) => d.id)).toEqual([DOC.archivedHouseGoPetit]);
    expect(alias.body).toEqual(api.body);
  });

  it('runs the same number of SQL statements whatever the number of documents', async () => {
    const two = await statementsOf(`${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}`);
    const four = await statementsOf(`${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvre}`);
    expect(four).toBe(two);
  });

  it('answers 400 for a malformed template id', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/abc`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'templateId', message: 'must be a UUID' }]);
  });

  it('answers 404 for an unknown template, a template of another project, and another organization\'s template', async () => {
    const unknown = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${UNKNOWN}`, { token: architect });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, message: 'Template not found' });
    const elsewhere = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.schoolDemolition}`, { token: architect });
    expect(elsewhere.body).toEqual(unknown.body);
    const foreign = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/templates/${TPL.cabinetSudCharpente}`, { token: architect });
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain('Vercors');
    const own = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}/templates/${TPL.cabinetSudCharpente}`, { token: other });
    expect(own.body.template.documents.map((d: { id: string }) => d.id)).toEqual([DOC.sudCharpenteVercors]);
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvre}`)).status).toBe(401);
  });
});

describe('DELETE /api/svc/v1/projects/{projectId}/templates/{templateId} (#14)', () => {
  const remove = (projectId: string, templateId: string, token = architect) =>
    request(t.url, 'DELETE', `${P}/projects/${projectId}/templates/${templateId}`, { token });
  const count = async (query: string, params: unknown[]) => Number((await sql<{ n: string }>(query, params))[0].n);
  const invite = (projectId: string, templateId: string, emails: string[]) => request(t.url, 'POST', `${P}/projects/${projectId}/templates/${templateId}/contractors`, {
    token: architect, body: { contractors: emails.map((email) => ({ name: email.split('@')[0], email })) },
  });

  it('deletes a slice only, with its documents, and leaves the main template and the other slices', async () => {
    const res = await remove(PRJ.residence, TPL.residenceGrosOeuvreTranche2);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await sql('select id from template where id = ?', [TPL.residenceGrosOeuvreTranche2])).toEqual([]);
    expect(await count('select count(*) as n from document where template_id = ?', [TPL.residenceGrosOeuvreTranche2])).toBe(0);
    expect(await sql('select id from template where id in (?, ?)', [TPL.residenceGrosOeuvre, TPL.residenceGrosOeuvreTranche1])).toHaveLength(2);
    const again = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceGrosOeuvreTranche2}`, { token: architect });
    expect(again.status).toBe(404);
  });

  it('deletes a main template with its slices and their documents', async () => {
    const trade = TRD.residence['04'];
    const main = (await addTemplate(PRJ.residence, { trade_id: trade })).body.template;
    const slice = (await addTemplate(PRJ.residence, { trade_id: trade })).body.template;
    await invite(PRJ.residence, main.id, ['a@menuiseries.test']);
    await invite(PRJ.residence, slice.id, ['b@menuiseries.test']);
    // The template's chosen offer points at its own document: the delete must untangle that cycle.
    const [doc] = await sql<{ id: string }>('select id from document where template_id = ?', [main.id]);
    await sql('update template set selected_consultation_id = ?, favourite_consultation_id = ? where id = ?', [doc.id, doc.id, main.id]);
    const res = await remove(PRJ.residence, main.id);
    expect(res.status).toBe(204);
    expect(await sql('select id from template where trade_id = ?', [trade])).toEqual([]);
    expect(await count('select count(*) as n from document where template_id in (?, ?)', [main.id, slice.id])).toBe(0);
  });

  it('answers 409 for a template holding an ANSWERED version, and deletes nothing', async () => {
    const templates = await count('select count(*) as n from template where trade_id = ?', [TRD.residence['01']]);
    const documents = await count('select count(*) as n from document d join template t on t.id = d.template_id where t.trade_id = ?', [TRD.residence['01']]);
    const res = await remove(PRJ.residence, TPL.residenceGrosOeuvre);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, message: 'The template or one of its slices holds answered offers: it cannot be deleted' });
    expect(await count('select count(*) as n from template where trade_id = ?', [TRD.residence['01']])).toBe(templates);
    expect(await count('select count(*) as n from document d join template t on t.id = d.template_id where t.trade_id = ?', [TRD.residence['01']])).toBe(documents);
  });

  it('answers 409 for a slice holding an ANSWERED version', async () => {
    const res = await remove(PRJ.residence, TPL.residenceGrosOeuvreTranche1);
    expect(res.status).toBe(409);
    expect(await sql('select id from template where id = ?', [TPL.residenceGrosOeuvreTranche1])).toHaveLength(1);
  });

  it('answers 409 for a main template whose only answer is in one of its slices, and keeps them all', async () => {
    const trade = TRD.residence['07'];
    const slice = (await addTemplate(PRJ.residence, { trade_id: trade })).body.template;
    expect(slice.is_slice).toBe(true);
    const invited = await invite(PRJ.residence, slice.id, ['c@plomberie.test']);
    await answer(invited.body.documents[0].id);
    const res = await remove(PRJ.residence, TPL.residencePlomberie);
    expect(res.status).toBe(409);
    expect(await sql('select id from template where trade_id = ?', [trade])).toHaveLength(2);
    expect((await remove(PRJ.residence, slice.id)).status).toBe(409);
  });

  it('deletes a template whose documents have versions but none ANSWERED (under /svc/v1 too)', async () => {
    const res = await request(t.url, 'DELETE', `/svc/v1/projects/${PRJ.school}/templates/${TPL.schoolMenuiseries}`, { token: architect });
    expect(res.status).toBe(204);
    expect(await sql('select id from template where id = ?', [TPL.schoolMenuiseries])).toEqual([]);
    expect(await count('select count(*) as n from document_version v join document d on d.id = v.document_id where d.template_id = ?', [TPL.schoolMenuiseries])).toBe(0);
  });

  it('answers 409 on an archived project', async () => {
    const res = await remove(PRJ.archivedHouse, TPL.archivedHouseGrosOeuvre);
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('The project is archived: it is read-only');
    expect(await sql('select id from template where id = ?', [TPL.archivedHouseGrosOeuvre])).toHaveLength(1);
  });

  it('answers 404 for an unknown template, a template of another project, and another organization\'s template', async () => {
    expect((await remove(PRJ.residence, UNKNOWN)).status).toBe(404);
    const elsewhere = await remove(PRJ.residence, TPL.schoolDemolition);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ code: 404, message: 'Template not found' });
    expect(await sql('select id from template where id = ?', [TPL.schoolDemolition])).toHaveLength(1);
    const foreign = await remove(PRJ.cabinetSudHall, TPL.cabinetSudCharpente);
    expect(foreign.status).toBe(404);
    expect(await sql('select id from template where id = ?', [TPL.cabinetSudCharpente])).toHaveLength(1);
  });

  it('answers 400 for a malformed id and 401 without a token', async () => {
    expect((await remove(PRJ.residence, 'nope')).status).toBe(400);
    const res = await request(t.url, 'DELETE', `${P}/projects/${PRJ.residence}/templates/${TPL.residenceElectricite}`);
    expect(res.status).toBe(401);
    expect(await sql('select id from template where id = ?', [TPL.residenceElectricite])).toHaveLength(1);
  });
});

describe('batch reads of TemplateService and DocumentService (the GraphQL loaders)', () => {
  /** architect@demo.test's context: Atelier Demo and Atelier Nord. */
  const context = (): ServiceContext => ({
    em: t.orm.em.fork(),
    config: t.config,
    caller: DEMO_ARCHITECT_CALLER,
  });

  it('reads the templates of many projects in one statement, leaving out projects of other organizations', async () => {
    const service = new TemplateService(context());
    const { result, statements } = await t.queries.measure(() => service.templatesByProject([PRJ.school, PRJ.nordOffices, PRJ.cabinetSudHall, UNKNOWN]));
    expect(statements).toBe(1);
    expect(result.get(PRJ.nordOffices)!.map((x) => x.id)).toEqual([TPL.nordOfficesElectricite]);
    expect(result.get(PRJ.nordOffices)![0]).toMatchObject({ projectId: PRJ.nordOffices, isSlice: false, slice: null, budgets: { value: 56000 }, trade: { number: '06' } });
    expect(result.get(PRJ.school)!.map((x) => x.id)).toContain(TPL.schoolDemolition);
    expect(result.get(PRJ.cabinetSudHall)).toEqual([]);
    expect(result.get(UNKNOWN)).toEqual([]);
  });

  it('reads documents, versions and contractors of many templates with one statement each', async () => {
    const service = new DocumentService(context());
    const docs = await t.queries.measure(() => service.documentsByTemplate([TPL.residenceGrosOeuvre, TPL.nordOfficesElectricite, TPL.cabinetSudCharpente]));
    expect(docs.statements).toBe(1);
    expect(docs.result.get(TPL.residenceGrosOeuvre)!.map((d) => [d.id, d.state])).toEqual([
      [DOC.residenceGoDurand, 'ANSWERED'], [DOC.residenceGoPetit, 'ANSWERED'], [DOC.residenceGoMoreau, 'IN_REVISION'], [DOC.residenceGoDurandRenovation, 'PENDING'],
    ]);
    expect(docs.result.get(TPL.nordOfficesElectricite)).toHaveLength(3);
    expect(docs.result.get(TPL.cabinetSudCharpente)).toEqual([]);

    const all = [...docs.result.values()].flat();
    const versions = await t.queries.measure(() => service.versionsByDocument(all.map((d) => d.id)));
    expect(versions.statements).toBe(1);
    const [petitVersion] = await sql<{ id: string }>('select id from document_version where document_id = ? and version = 1', [DOC.residenceGoPetit]);
    expect(versions.result.get(DOC.residenceGoPetit)).toEqual([{
      id: petitVersion.id, version: 1, subTotal: 124800, discount: 0, status: 'ANSWERED', sentAt: new Date('2026-10-09T14:30:00Z'), isMandate: true, hasFiles: true, hasDpgf: true,
    }]);
    const contractors = await t.queries.measure(() => service.contractorsByIds([...all.map((d) => d.contractorId), CTR.sudCharpentesVercors]));
    expect(contractors.statements).toBe(1);
    expect(contractors.result.get(CTR.batimentsDurand)).toEqual({
      id: CTR.batimentsDurand, name: 'Bâtiments Durand SAS', email: 'p.durand@batiments-durand.fr', phone: '04 78 58 12 30', information: { fiscalNumber: '73282932000074' },
      companyId: DEMO_IDS.organizations.batimentsDurand, createdAt: new Date('2026-02-01T09:00:00Z'), updatedAt: new Date('2026-02-01T09:00:00Z'),
    });
    expect(contractors.result.has(CTR.nordCourantsLambert)).toBe(true);
    expect(contractors.result.has(CTR.sudCharpentesVercors)).toBe(false);
  });
});
