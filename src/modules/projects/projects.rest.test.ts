import { CONSTRUCTION_TYPES, CURRENCIES, RESPONSE_TYPES } from './project.entity';
import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const P = '/api/svc/v1';
const PRJ = DEMO_IDS.projects;
const ORG = DEMO_IDS.organizations;
const USR = DEMO_IDS.users;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UNKNOWN = '0b7f4a52-3c1d-4e8e-9a51-2f6d7c8e9a10';
const NOT_FOUND = { code: 404, message: 'Project not found' };
const PROJECT_KEYS = [
  'archived', 'archived_at', 'commencement_works_construction', 'construction_type', 'created_at', 'end_of_offer_date',
  'end_works_construction', 'id', 'legacy_id', 'managers', 'name', 'optional_dates', 'organization_id',
  'published_on_marketplace', 'response_type', 'scopes', 'site_address', 'tenders_closing_activated', 'trade_list_id',
  'updated_at',
];
const CLAIRE = { id: USR.architect, first_name: 'Claire', last_name: 'Dubois', email: 'architect@demo.test' };

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

/** The smallest valid create body. */
const minimal = (extra: Record<string, unknown> = {}) => ({
  name: 'Crèche municipale', construction_type: 'public_building', managers: [{ id: USR.architect }],
  trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF', ...extra,
});

const create = (body: unknown, token = architect) => request(t.url, 'POST', `${P}/projects`, { token, body });

async function createOk(extra: Record<string, unknown> = {}): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await create(minimal(extra));
  expect(res.status).toBe(201);
  return res.body.project;
}

const ids = (res: { body: { projects: { id: string }[] } }) => res.body.projects.map((p) => p.id);

/** A create that must fail with exactly these field errors. */
async function expectInvalid(body: unknown, errors: { field: string; message: string }[]) {
  const res = await create(body);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors });
}

describe('GET /api/svc/v1/projects (#1)', () => {
  it('lists the projects of every organization where the caller is Administrator, newest first, never archived ones', async () => {
    const res = await request(t.url, 'GET', `${P}/projects`, { token: architect });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['projects']);
    const seen = ids(res);
    expect(seen.filter((id: string) => (Object.values(PRJ) as string[]).includes(id))).toEqual([PRJ.school, PRJ.nordOffices, PRJ.residence]);
    expect(seen).not.toContain(PRJ.archivedHouse);
    expect(seen).not.toContain(PRJ.cabinetSudHall);
    for (const p of res.body.projects) {
      expect(Object.keys(p).sort()).toEqual(PROJECT_KEYS);
      expect(p.archived).toBe(false);
    }
  });

  it('answers each project in the read form of GET project', async () => {
    const list = await request(t.url, 'GET', `${P}/projects`, { token: architect });
    const one = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}`, { token: architect });
    expect(list.body.projects.find((p: { id: string }) => p.id === PRJ.residence)).toEqual(one.body.project);
  });

  it('shows another organization only its own projects', async () => {
    const res = await request(t.url, 'GET', `${P}/projects`, { token: other });
    expect(res.status).toBe(200);
    expect(ids(res)).toContain(PRJ.cabinetSudHall);
    for (const p of res.body.projects) expect(p.organization_id).toBe(ORG.cabinetSud);
  });

  it('narrows to one organization with ?organization_id=', async () => {
    const res = await request(t.url, 'GET', `${P}/projects?organization_id=${ORG.atelierNord}`, { token: architect });
    expect(res.status).toBe(200);
    expect(ids(res)).toContain(PRJ.nordOffices);
    expect(ids(res)).not.toContain(PRJ.residence);
    for (const p of res.body.projects) expect(p.organization_id).toBe(ORG.atelierNord);
  });

  it('answers 404 for ?organization_id= of an organization the caller is not Administrator of, never its projects', async () => {
    const foreign = await request(t.url, 'GET', `${P}/projects?organization_id=${ORG.cabinetSud}`, { token: architect });
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain(PRJ.cabinetSudHall);
    const unknown = await request(t.url, 'GET', `${P}/projects?organization_id=${UNKNOWN}`, { token: architect });
    expect(unknown.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
  });

  it('lists only archived projects with ?archived=true, and the others with ?archived=false', async () => {
    const archived = await request(t.url, 'GET', `${P}/projects?archived=true`, { token: architect });
    expect(archived.status).toBe(200);
    expect(ids(archived)).toContain(PRJ.archivedHouse);
    for (const p of archived.body.projects) {
      expect(p.archived).toBe(true);
      expect(p.archived_at).toMatch(TIMESTAMP);
    }
    const live = await request(t.url, 'GET', `${P}/projects?archived=false`, { token: architect });
    expect(ids(live)).toEqual(ids(await request(t.url, 'GET', `${P}/projects`, { token: architect })));
  });

  it('refuses query values that break the rules, and unknown query parameters', async () => {
    const cases: [string, { field: string; message: string }][] = [
      ['organization_id=42', { field: 'organization_id', message: 'must be a UUID' }],
      ['archived=yes', { field: 'archived', message: 'must be one of: true, false' }],
      ['limit=0', { field: 'limit', message: 'must be a whole number from 1 to 500' }],
      ['limit=501', { field: 'limit', message: 'must be a whole number from 1 to 500' }],
      ['limit=-1', { field: 'limit', message: 'must be a whole number from 1 to 500' }],
      ['limit=ten', { field: 'limit', message: 'must be a whole number from 1 to 500' }],
      ['limit=2.5', { field: 'limit', message: 'must be a whole number from 1 to 500' }],
      ['limit=2&cursor=not-a-cursor', { field: 'cursor', message: 'is not a cursor given by this service' }],
      ['colour=red', { field: 'colour', message: 'is not accepted by this operation' }],
    ];
    for (const [query, error] of cases) {
      const res = await request(t.url, 'GET', `${P}/projects?${query}`, { token: architect });
      expect({ query, status: res.status, body: res.body }).toEqual({ query, status: 400, body: { code: 400, message: 'The request is not valid', errors: [error] } });
    }
  });

  it('pages with limit and cursor: {projects, next_cursor, total_count}, the same projects in the same order', async () => {
    for (let i = 0; i < 3; i++) await createOk({ name: `Paged ${i}` });
    const all = ids(await request(t.url, 'GET', `${P}/projects`, { token: architect }));
    expect(all.length).toBeGreaterThanOrEqual(6);
    const walked: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await request(t.url, 'GET', `${P}/projects?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: architect });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['next_cursor', 'projects', 'total_count']);
      expect(res.body.total_count).toBe(all.length);
      expect(res.body.projects.length).toBeLessThanOrEqual(2);
      walked.push(...ids(res));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(walked).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 2));
  });

  it('answers next_cursor null on the last page', async () => {
    const res = await request(t.url, 'GET', `${P}/projects?limit=500`, { token: architect });
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.projects.length).toBe(res.body.total_count);
  });

  it('pages the archived list and a single organization too', async () => {
    const archived = await request(t.url, 'GET', `${P}/projects?archived=true&limit=1`, { token: architect });
    expect(archived.status).toBe(200);
    expect(archived.body.projects.every((p: { archived: boolean }) => p.archived)).toBe(true);
    const nord = await request(t.url, 'GET', `${P}/projects?organization_id=${ORG.atelierNord}&limit=1`, { token: architect });
    expect(nord.body.total_count).toBe(ids(await request(t.url, 'GET', `${P}/projects?organization_id=${ORG.atelierNord}`, { token: architect })).length);
  });

  it('runs the same number of SQL statements for 2 projects as for 30', async () => {
    // Atelier Nord holds one demo project and is used by no other test of this file.
    const url = `${P}/projects?organization_id=${ORG.atelierNord}`;
    await createOk({ name: 'Nord 1', organization_id: ORG.atelierNord });
    const two = await t.queries.measure(() => request(t.url, 'GET', url, { token: architect }));
    expect(two.result.body.projects).toHaveLength(2);
    for (let i = 2; i <= 29; i++) await createOk({ name: `Nord ${i}`, organization_id: ORG.atelierNord });
    const thirty = await t.queries.measure(() => request(t.url, 'GET', url, { token: architect }));
    expect(thirty.result.body.projects).toHaveLength(30);
    for (const p of thirty.result.body.projects) expect(p.managers).toEqual([CLAIRE]);
    expect(thirty.statements).toBe(two.statements);
    expect(two.statements).toBeLessThanOrEqual(4);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'GET', `${P}/projects`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(401);
    expect(res.body.projects).toBeUndefined();
  });
});

describe('POST /api/svc/v1/projects (#2)', () => {
  const full = () => ({
    name: 'Médiathèque Part-Dieu', organization_id: ORG.atelierDemo, construction_type: 'public_building',
    managers: [{ id: USR.architect }, { id: USR.member }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF_QUOTE',
    end_of_offer_date: '2027-03-01', end_works_construction: '2028-06-30T00:00:00', commencement_works_construction: '2027-05-03T08:30:00',
    tenders_closing_activated: true, published_on_marketplace: true,
    scopes: { currency: 'CHF', vat: 7.7, prorate: 1.5, levels: 4 },
    site_address: { number: 12, zip_code: 69003 }, optional_dates: { noc: '2027-01-10', responses_opening_date: '2027-03-05T00:00:00' },
  });

  it('creates the project: 201 with every create-input field, archived, archived_at, created_at, updated_at', async () => {
    const res = await create(full());
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['project']);
    const p = res.body.project;
    expect(Object.keys(p).sort()).toEqual(PROJECT_KEYS);
    expect(p).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      legacy_id: expect.stringMatching(/^.{17}$/),
      name: 'Médiathèque Part-Dieu', organization_id: ORG.atelierDemo, construction_type: 'public_building',
      managers: [CLAIRE, { id: USR.member, first_name: 'Sophie', last_name: 'Garnier', email: 'member@demo.test' }],
      trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF_QUOTE',
      end_of_offer_date: '2027-03-01', end_works_construction: '2028-06-30', commencement_works_construction: '2027-05-03',
      tenders_closing_activated: true, published_on_marketplace: true,
      scopes: { currency: 'CHF', vat: 7.7, prorate: 1.5, levels: 4 },
      site_address: { number: 12, zip_code: 69003 }, optional_dates: { noc: '2027-01-10', responses_opening_date: '2027-03-05' },
      archived: false, archived_at: null, created_at: expect.stringMatching(TIMESTAMP), updated_at: expect.stringMatching(TIMESTAMP),
    });
    const read = await request(t.url, 'GET', `${P}/projects/${p.id}`, { token: architect });
    expect(read.body.project).toEqual(p);
  });

  it('answers null for the optional fields that were not sent, false for the flags', async () => {
    const p = await createOk();
    expect(p).toMatchObject({
      end_of_offer_date: null, end_works_construction: null, commencement_works_construction: null,
      tenders_closing_activated: false, published_on_marketplace: false, scopes: null, site_address: null, optional_dates: null,
    });
    const partial = await createOk({ scopes: { vat: 20 }, site_address: {}, optional_dates: { noc: '2027-01-10' } });
    expect(partial).toMatchObject({
      scopes: { currency: null, vat: 20, prorate: null, levels: null },
      site_address: { number: null, zip_code: null },
      optional_dates: { noc: '2027-01-10', responses_opening_date: null },
    });
  });

  it('copies the trade list\'s trades into project trades', async () => {
    const p = await createOk();
    const trades = await request(t.url, 'GET', `${P}/projects/${p.id}/trades`, { token: architect });
    expect(trades.status).toBe(200);
    expect(trades.body.trades.map((x: Record<string, unknown>) => [x.number, x.name, x.short_name, x.comment, x.project_id])).toEqual([
      ['01', 'Gros œuvre', 'GO', null, p.id], ['02', 'Charpente', 'CH', null, p.id], ['03', 'Couverture', 'CO', null, p.id],
      ['04', 'Menuiseries extérieures', 'ME', null, p.id], ['05', 'Plâtrerie', 'PL', null, p.id], ['06', 'Électricité', 'EL', null, p.id],
      ['07', 'Plomberie', 'PB', null, p.id], ['08', 'Peinture', 'PE', null, p.id],
    ]);
    const demo = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/trades`, { token: architect });
    const newIds = new Set(trades.body.trades.map((x: { id: string }) => x.id));
    for (const x of demo.body.trades) expect(newIds.has(x.id)).toBe(false);
  });

  it('copies an organization\'s private trade list too', async () => {
    const p = await createOk({ trade_list_id: DEMO_IDS.tradeLists.atelierDemo });
    const trades = await request(t.url, 'GET', `${P}/projects/${p.id}/trades`, { token: architect });
    expect(trades.body.trades.map((x: { short_name: string }) => x.short_name)).toEqual(['DES', 'DEM', 'GO', 'MI', 'RS']);
  });

  it('uses the caller\'s current organization when organization_id is absent or null', async () => {
    expect((await createOk()).organization_id).toBe(ORG.atelierDemo);
    expect((await createOk({ organization_id: null })).organization_id).toBe(ORG.atelierDemo);
    const sud = await create(minimal({ trade_list_id: DEMO_IDS.tradeLists.cabinetSud, managers: [{ id: USR.other }] }), other);
    expect(sud.status).toBe(201);
    expect(sud.body.project.organization_id).toBe(ORG.cabinetSud);
  });

  it('creates in another organization of the caller with organization_id', async () => {
    const p = await createOk({ organization_id: ORG.atelierNord });
    expect(p.organization_id).toBe(ORG.atelierNord);
    const nord = await request(t.url, 'GET', `${P}/projects?organization_id=${ORG.atelierNord}`, { token: architect });
    expect(ids(nord)).toContain(p.id);
  });

  it('accepts every construction_type, response_type and currency of the interface', async () => {
    for (const [i, constructionType] of CONSTRUCTION_TYPES.entries()) {
      const responseType = RESPONSE_TYPES[i % RESPONSE_TYPES.length];
      const currency = CURRENCIES[i % CURRENCIES.length];
      const res = await create(minimal({ construction_type: constructionType, response_type: responseType, scopes: { currency, vat: 20 } }));
      expect({ constructionType, status: res.status }).toEqual({ constructionType, status: 201 });
      expect(res.body.project).toMatchObject({ construction_type: constructionType, response_type: responseType, scopes: { currency } });
    }
    expect(CONSTRUCTION_TYPES).toEqual(['collective_building', 'extension', 'health_building', 'mall', 'office', 'other', 'public_building', 'public_space', 'single_flat', 'warehouse']);
    expect(RESPONSE_TYPES).toEqual(['DPGF', 'DPGF_QUOTE', 'QUOTE']);
    expect(CURRENCIES).toEqual(['CHF', 'DZD', 'EUR', 'GBP', 'MAD', 'TND', 'USD']);
  });

  it('accepts the bounds: vat 1 and 100, prorate 0 and 100, levels 1, site_address.number 1', async () => {
    const low = await createOk({ scopes: { vat: 1, prorate: 0, levels: 1 }, site_address: { number: 1, zip_code: 1000 } });
    expect(low.scopes).toEqual({ currency: null, vat: 1, prorate: 0, levels: 1 });
    expect(low.site_address).toEqual({ number: 1, zip_code: 1000 });
    const high = await createOk({ scopes: { vat: 100, prorate: 100, levels: 250 } });
    expect(high.scopes).toEqual({ currency: null, vat: 100, prorate: 100, levels: 250 });
  });

  it('accepts dates as YYYY-MM-DD and as date-times without a zone, and answers YYYY-MM-DD', async () => {
    const p = await createOk({ end_of_offer_date: '2026-12-01T00:00:00', commencement_works_construction: '2028-02-29', end_works_construction: '2028-03-01T23:59:59' });
    expect(p).toMatchObject({ end_of_offer_date: '2026-12-01', commencement_works_construction: '2028-02-29', end_works_construction: '2028-03-01' });
  });

  it('requires name, construction_type, managers, trade_list_id and response_type', async () => {
    await expectInvalid({}, [
      { field: 'name', message: 'is required' },
      { field: 'construction_type', message: 'is required' },
      { field: 'managers', message: 'is required' },
      { field: 'trade_list_id', message: 'is required' },
      { field: 'response_type', message: 'is required' },
    ]);
  });

  it('refuses values outside the enums', async () => {
    await expectInvalid(minimal({ construction_type: 'castle', response_type: 'dpgf', scopes: { currency: 'JPY', vat: 20 } }), [
      { field: 'construction_type', message: 'must be one of: collective_building, extension, health_building, mall, office, other, public_building, public_space, single_flat, warehouse' },
      { field: 'response_type', message: 'must be one of: DPGF, DPGF_QUOTE, QUOTE' },
      { field: 'scopes.currency', message: 'must be one of: CHF, DZD, EUR, GBP, MAD, TND, USD' },
    ]);
  });

  it('requires at least one manager', async () => {
    await expectInvalid(minimal({ managers: [] }), [{ field: 'managers', message: 'must have at least 1 item' }]);
  });

  it('requires each manager id, as a UUID, naming the field by index', async () => {
    await expectInvalid(minimal({ managers: [{ id: USR.architect }, { id: 'claire' }, {}] }), [
      { field: 'managers.1.id', message: 'must be a UUID' },
      { field: 'managers.2.id', message: 'is required' },
    ]);
  });

  it('refuses managers that are not users of the organization, whether they exist elsewhere or not', async () => {
    await expectInvalid(minimal({ managers: [{ id: USR.architect }, { id: USR.other }, { id: UNKNOWN }] }), [
      { field: 'managers.1.id', message: 'is not a user of the organization' },
      { field: 'managers.2.id', message: 'is not a user of the organization' },
    ]);
    // Sophie Garnier belongs to Atelier Demo only.
    await expectInvalid(minimal({ organization_id: ORG.atelierNord, managers: [{ id: USR.member }] }), [
      { field: 'managers.0.id', message: 'is not a user of the organization' },
    ]);
  });

  it('refuses managers that is not an array of objects', async () => {
    const res = await create(minimal({ managers: { id: USR.architect } }));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['managers']);
  });

  it('requires scopes.vat when scopes is sent, from 1 to 100', async () => {
    await expectInvalid(minimal({ scopes: {} }), [{ field: 'scopes.vat', message: 'is required' }]);
    await expectInvalid(minimal({ scopes: { currency: 'EUR' } }), [{ field: 'scopes.vat', message: 'is required' }]);
    await expectInvalid(minimal({ scopes: { vat: 0 } }), [{ field: 'scopes.vat', message: 'must be at least 1' }]);
    await expectInvalid(minimal({ scopes: { vat: 0.99 } }), [{ field: 'scopes.vat', message: 'must be at least 1' }]);
    await expectInvalid(minimal({ scopes: { vat: 100.01 } }), [{ field: 'scopes.vat', message: 'must be at most 100' }]);
    await expectInvalid(minimal({ scopes: { vat: '20' } }), [{ field: 'scopes.vat', message: 'must be a number' }]);
  });

  it('keeps scopes.prorate from 0 to 100', async () => {
    await expectInvalid(minimal({ scopes: { vat: 20, prorate: -0.5 } }), [{ field: 'scopes.prorate', message: 'must be at least 0' }]);
    await expectInvalid(minimal({ scopes: { vat: 20, prorate: 101 } }), [{ field: 'scopes.prorate', message: 'must be at most 100' }]);
  });

  it('keeps scopes.levels at least 1', async () => {
    await expectInvalid(minimal({ scopes: { vat: 20, levels: 0 } }), [{ field: 'scopes.levels', message: 'must be at least 1' }]);
  });

  it('keeps site_address.number at least 1 and zip_code a number', async () => {
    await expectInvalid(minimal({ site_address: { number: 0, zip_code: '69003' } }), [
      { field: 'site_address.number', message: 'must be at least 1' },
      { field: 'site_address.zip_code', message: 'must be a number' },
    ]);
  });

  it('refuses dates that do not exist or are not dates, at their path', async () => {
    const message = 'must be a valid date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SS without a zone)';
    await expectInvalid(minimal({
      end_of_offer_date: '2026-02-30', end_works_construction: '2027-13-01', commencement_works_construction: 'tomorrow',
      optional_dates: { noc: '2026-02-29', responses_opening_date: '2026-12-01T25:00:00' },
    }), [
      { field: 'end_of_offer_date', message },
      { field: 'end_works_construction', message },
      { field: 'commencement_works_construction', message },
      { field: 'optional_dates.noc', message },
      { field: 'optional_dates.responses_opening_date', message },
    ]);
  });

  it('refuses booleans that are not booleans and objects that are not objects', async () => {
    await expectInvalid(minimal({ tenders_closing_activated: 'yes', published_on_marketplace: 1 }), [
      { field: 'tenders_closing_activated', message: 'must be true or false' },
      { field: 'published_on_marketplace', message: 'must be true or false' },
    ]);
    const res = await create(minimal({ scopes: 'EUR' }));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['scopes']);
  });

  it('refuses a name that is empty or not a string', async () => {
    await expectInvalid(minimal({ name: '' }), [{ field: 'name', message: 'must not be empty' }]);
    await expectInvalid(minimal({ name: 42 }), [{ field: 'name', message: 'must be a string' }]);
  });

  it('refuses unknown fields, nested ones included, and camelCase names', async () => {
    await expectInvalid(minimal({ colour: 'red', scopes: { vat: 20, tax: 3 }, managers: [{ id: USR.architect, role: 'lead' }] }), [
      { field: 'colour', message: 'is not accepted by this operation' },
      { field: 'managers.0.role', message: 'is not accepted by this operation' },
      { field: 'scopes.tax', message: 'is not accepted by this operation' },
    ]);
    const { response_type: responseType, ...rest } = minimal();
    await expectInvalid({ ...rest, responseType }, [
      { field: 'responseType', message: 'is not accepted by this operation' },
      { field: 'response_type', message: 'is required' },
    ]);
  });

  it('refuses organization_id that is not a UUID, or an organization the caller is not Administrator of', async () => {
    await expectInvalid(minimal({ organization_id: 'atelier-demo' }), [{ field: 'organization_id', message: 'must be a UUID' }]);
    await expectInvalid(minimal({ name: 'Chez Cabinet Sud', organization_id: ORG.cabinetSud }), [{ field: 'organization_id', message: 'is not an organization where you are Administrator' }]);
    await expectInvalid(minimal({ organization_id: UNKNOWN }), [{ field: 'organization_id', message: 'is not an organization where you are Administrator' }]);
    const sud = await request(t.url, 'GET', `${P}/projects`, { token: other });
    expect(sud.body.projects.map((p: { name: string }) => p.name)).not.toContain('Chez Cabinet Sud');
  });

  it('refuses a trade list that is not a UUID, unknown, or private to another organization', async () => {
    await expectInvalid(minimal({ trade_list_id: 'standard' }), [{ field: 'trade_list_id', message: 'must be a UUID' }]);
    const message = 'is not a trade list available to the organization';
    await expectInvalid(minimal({ trade_list_id: UNKNOWN }), [{ field: 'trade_list_id', message }]);
    await expectInvalid(minimal({ trade_list_id: DEMO_IDS.tradeLists.cabinetSud }), [{ field: 'trade_list_id', message }]);
    await expectInvalid(minimal({ organization_id: ORG.atelierNord, trade_list_id: DEMO_IDS.tradeLists.atelierDemo }), [{ field: 'trade_list_id', message }]);
  });

  it('answers 400 for malformed JSON and for a body that is not an object', async () => {
    const bad = await request(t.url, 'POST', `${P}/projects`, { token: architect, raw: '{"name": "x", }', headers: { 'Content-Type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ code: 400, message: 'The request body is not valid JSON' });
    const list = await request(t.url, 'POST', `${P}/projects`, { token: architect, body: [minimal()] });
    expect(list.status).toBe(400);
  });

  it('creates nothing when the input is refused', async () => {
    const before = ids(await request(t.url, 'GET', `${P}/projects`, { token: architect })).length;
    await create(minimal({ managers: [{ id: UNKNOWN }] }));
    await create(minimal({ scopes: { vat: 0 } }));
    const after = ids(await request(t.url, 'GET', `${P}/projects`, { token: architect })).length;
    expect(after).toBe(before);
  });

  it('answers 401 without a token, creating nothing', async () => {
    const res = await request(t.url, 'POST', `${P}/projects`, { body: minimal({ name: 'Sans jeton' }) });
    expect(res.status).toBe(401);
    const list = await request(t.url, 'GET', `${P}/projects`, { token: architect });
    expect(list.body.projects.map((p: { name: string }) => p.name)).not.toContain('Sans jeton');
  });
});

describe('GET /api/svc/v1/projects/{projectId} (#3)', () => {
  it('answers the project under `project`, field for field', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      project: {
        id: PRJ.residence, legacy_id: 'DEMOPRJ0000000001', name: 'Résidence Les Tilleuls – 42 logements',
        organization_id: ORG.atelierDemo, construction_type: 'collective_building', managers: [CLAIRE],
        trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF',
        end_of_offer_date: '2027-01-29', end_works_construction: '2028-09-29', commencement_works_construction: '2027-04-05',
        tenders_closing_activated: true, published_on_marketplace: false,
        scopes: { currency: 'EUR', vat: 20, prorate: 2, levels: 3 },
        site_address: { number: 14, zip_code: 69003 }, optional_dates: { noc: '2026-12-15', responses_opening_date: '2027-02-01' },
        archived: false, archived_at: null, created_at: '2026-06-02T08:30:00.000000Z', updated_at: '2026-06-02T08:30:00.000000Z',
      },
    });
  });

  it('still answers an archived project, flagged archived', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.archivedHouse}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.project).toMatchObject({ id: PRJ.archivedHouse, archived: true, archived_at: '2026-09-30T16:00:00.000000Z' });
  });

  it('answers a project of the caller\'s other organization', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.nordOffices}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.project.organization_id).toBe(ORG.atelierNord);
  });

  it('answers 404 for an unknown id', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${UNKNOWN}`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it('answers 404 for another organization\'s project, exactly like an unknown id, never its data', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
    expect(res.text).not.toContain('Carpentras');
    const theirs = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}`, { token: other });
    expect(theirs.status).toBe(200);
    const mine = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}`, { token: other });
    expect(mine.status).toBe(404);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const res = await request(t.url, 'GET', `${P}/projects/DEMOPRJ0000000001`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'projectId', message: 'must be a UUID' }] });
  });

  it('answers 401 without a token, and with a token that is not a JWT', async () => {
    expect((await request(t.url, 'GET', `${P}/projects/${PRJ.residence}`)).status).toBe(401);
    const garbage = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}`, { token: 'garbage' });
    expect(garbage.status).toBe(401);
    expect(garbage.text).not.toContain('Tilleuls');
  });
});

describe('PUT /api/svc/v1/projects/{projectId}/archive (#4)', () => {
  it('archives: 200 with the project, archived true and archived_at set', async () => {
    const p = await createOk({ name: 'À archiver' });
    const res = await request(t.url, 'PUT', `${P}/projects/${p.id}/archive`, { token: architect });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['project']);
    expect(res.body.project).toEqual({ ...p, archived: true, archived_at: expect.stringMatching(TIMESTAMP), updated_at: expect.stringMatching(TIMESTAMP) });
    expect(res.body.project.archived_at >= p.created_at).toBe(true);
  });

  it('is idempotent: archiving twice answers 200 with archived_at unchanged', async () => {
    const p = await createOk({ name: 'Deux fois' });
    const first = await request(t.url, 'PUT', `${P}/projects/${p.id}/archive`, { token: architect });
    const second = await request(t.url, 'PUT', `${P}/projects/${p.id}/archive`, { token: architect });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    const demo = await request(t.url, 'PUT', `${P}/projects/${PRJ.archivedHouse}/archive`, { token: architect });
    expect(demo.status).toBe(200);
    expect(demo.body.project.archived_at).toBe('2026-09-30T16:00:00.000000Z');
  });

  it('leaves the project out of GET projects and lists it with ?archived=true', async () => {
    const p = await createOk({ name: 'Archivé' });
    expect(ids(await request(t.url, 'GET', `${P}/projects`, { token: architect }))).toContain(p.id);
    await request(t.url, 'PUT', `${P}/projects/${p.id}/archive`, { token: architect });
    expect(ids(await request(t.url, 'GET', `${P}/projects`, { token: architect }))).not.toContain(p.id);
    expect(ids(await request(t.url, 'GET', `${P}/projects?archived=true`, { token: architect }))).toContain(p.id);
    const read = await request(t.url, 'GET', `${P}/projects/${p.id}`, { token: architect });
    expect(read.body.project.archived).toBe(true);
  });

  it('makes the project read-only: writes below it answer 409', async () => {
    const p = await createOk({ name: 'Lecture seule' });
    const trades = await request(t.url, 'GET', `${P}/projects/${p.id}/trades`, { token: architect });
    await request(t.url, 'PUT', `${P}/projects/${p.id}/archive`, { token: architect });
    const tradeId = trades.body.trades[0].id;
    const conflict = { code: 409, message: 'The project is archived: it is read-only' };
    const post = await request(t.url, 'POST', `${P}/projects/${p.id}/trades`, { token: architect, body: { name: 'N', number: '09', short_name: 'N' } });
    expect([post.status, post.body]).toEqual([409, conflict]);
    const put = await request(t.url, 'PUT', `${P}/projects/${p.id}/trades/${tradeId}`, { token: architect, body: { name: 'N', number: '01', short_name: 'N' } });
    expect([put.status, put.body]).toEqual([409, conflict]);
    const del = await request(t.url, 'DELETE', `${P}/projects/${p.id}/trades/${tradeId}`, { token: architect });
    expect([del.status, del.body]).toEqual([409, conflict]);
    const after = await request(t.url, 'GET', `${P}/projects/${p.id}/trades`, { token: architect });
    expect(after.body.trades).toEqual(trades.body.trades);
  });

  it('answers 404 for an unknown id and for another organization\'s project, which stays live', async () => {
    const unknown = await request(t.url, 'PUT', `${P}/projects/${UNKNOWN}/archive`, { token: architect });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(NOT_FOUND);
    const foreign = await request(t.url, 'PUT', `${P}/projects/${PRJ.cabinetSudHall}/archive`, { token: architect });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(NOT_FOUND);
    const theirs = await request(t.url, 'GET', `${P}/projects/${PRJ.cabinetSudHall}`, { token: other });
    expect(theirs.body.project.archived).toBe(false);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const res = await request(t.url, 'PUT', `${P}/projects/123/archive`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'projectId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token, archiving nothing', async () => {
    const p = await createOk({ name: 'Pas sans jeton' });
    const res = await request(t.url, 'PUT', `${P}/projects/${p.id}/archive`);
    expect(res.status).toBe(401);
    const read = await request(t.url, 'GET', `${P}/projects/${p.id}`, { token: architect });
    expect(read.body.project.archived).toBe(false);
  });
});
