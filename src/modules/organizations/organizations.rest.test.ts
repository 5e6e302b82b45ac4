import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const P = '/api/svc/v1';
const ALIAS = '/svc/v1';
const ORG = DEMO_IDS.organizations;
const USR = DEMO_IDS.users;
const UNKNOWN = '0b7f4a52-3c1d-4e8e-9a51-2f6d7c8e9a10';
const ORG_NOT_FOUND = { code: 404, message: 'Organization not found' };
const USER_NOT_FOUND = { code: 404, message: 'User not found' };

const CLAIRE = { id: USR.architect, first_name: 'Claire', last_name: 'Dubois', phone: '04 72 10 20 30', mobile: '06 12 34 56 78', email: 'architect@demo.test', is_registered: true };
const SOPHIE = { id: USR.member, first_name: 'Sophie', last_name: 'Garnier', phone: '04 72 10 20 31', mobile: '06 98 76 54 32', email: 'member@demo.test', is_registered: true };
const MARC = { id: USR.noapi, first_name: 'Marc', last_name: 'Henry', phone: '04 72 10 20 32', mobile: null, email: 'noapi@demo.test', is_registered: true };
const JULIEN = { id: USR.other, first_name: 'Julien', last_name: 'Roux', phone: '04 42 27 15 60', mobile: null, email: 'other@demo.test', is_registered: true };

/** The organization records of the demo data, exactly as interface.md's Organization (+ users' id). */
const ATELIER_DEMO = {
  id: ORG.atelierDemo, name: 'Atelier Demo', information: { fiscal_number: '81234567800016' },
  addresses: [{ number: '12', address: 'rue de la République', zip_code: '69002', city: 'Lyon', country: 'fr' }],
  users: [CLAIRE, SOPHIE, MARC],
  created_at: '2026-01-05T09:00:00.000000Z', updated_at: '2026-01-05T09:00:00.000000Z',
};
const ATELIER_NORD = {
  id: ORG.atelierNord, name: 'Atelier Nord', information: { fiscal_number: '82345678900021' },
  addresses: [{ number: '45', address: 'quai du Wault', zip_code: '59000', city: 'Lille', country: 'fr' }],
  users: [CLAIRE],
  created_at: '2026-01-05T09:10:00.000000Z', updated_at: '2026-01-05T09:10:00.000000Z',
};
const CABINET_SUD = {
  id: ORG.cabinetSud, name: 'Cabinet Sud', information: { fiscal_number: '83456789000035' },
  addresses: [{ number: '8', address: 'cours Mirabeau', zip_code: '13100', city: 'Aix-en-Provence', country: 'fr' }],
  users: [JULIEN],
  created_at: '2026-01-06T10:00:00.000000Z', updated_at: '2026-01-06T10:00:00.000000Z',
};

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

/** The same request on the path and on its /svc/v1 alias: both answers, which must be identical. */
async function both(method: string, path: string, token?: string, body?: unknown) {
  const main = await request(t.url, method, P + path, { token, body });
  const alias = await request(t.url, method, ALIAS + path, { token, body });
  expect({ status: alias.status, body: alias.body }).toEqual({ status: main.status, body: main.body });
  return main;
}

const switchTo = (organizationId: string, token = architect) =>
  request(t.url, 'POST', `${P}/organizations/switch`, { token, body: { organization_id: organizationId } });

describe('GET /api/svc/v1/organizations (#17)', () => {
  it('lists the organizations where the caller is Administrator, by name, each record field for field', async () => {
    const res = await both('GET', '/organizations', architect);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organizations: [ATELIER_DEMO, ATELIER_NORD] });
  });

  it('never lists another organization\'s record', async () => {
    const res = await both('GET', '/organizations', other);
    expect(res.body).toEqual({ organizations: [CABINET_SUD] });
    expect(res.text).not.toContain('Atelier');
  });

  it('answers 401 without a token, on both paths', async () => {
    const res = await both('GET', '/organizations');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(401);
  });

  it('answers 403 for a user who is Administrator of no organization', async () => {
    const member = await tokenFor(t.url, 'member@demo.test');
    const res = await both('GET', '/organizations', member);
    expect(res.status).toBe(403);
    expect(res.body.organizations).toBeUndefined();
  });
});

describe('GET /api/svc/v1/organizations/users/{userId} (#18)', () => {
  it('answers a user of one of the caller\'s organizations, with the organizations they share with the caller', async () => {
    const res = await both('GET', `/organizations/users/${USR.member}`, architect);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user: { ...SOPHIE, organization_ids: [ORG.atelierDemo] } });
  });

  it('lists the caller\'s own organizations by name', async () => {
    const res = await both('GET', `/organizations/users/${USR.architect}`, architect);
    expect(res.body).toEqual({ user: { ...CLAIRE, organization_ids: [ORG.atelierDemo, ORG.atelierNord] } });
  });

  it('answers 404 for a user of another organization, never their data', async () => {
    const res = await both('GET', `/organizations/users/${USR.other}`, architect);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(USER_NOT_FOUND);
    expect(res.text).not.toContain('Roux');
    const back = await both('GET', `/organizations/users/${USR.architect}`, other);
    expect(back.body).toEqual(USER_NOT_FOUND);
  });

  it('answers 404 for a contractor contact and for an unknown id', async () => {
    expect((await both('GET', `/organizations/users/${USR.pierreDurand}`, architect)).body).toEqual(USER_NOT_FOUND);
    const unknown = await both('GET', `/organizations/users/${UNKNOWN}`, architect);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(USER_NOT_FOUND);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const res = await both('GET', '/organizations/users/claire', architect);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'userId', message: 'must be a UUID' }] });
  });

  it('answers 401 without a token', async () => {
    expect((await both('GET', `/organizations/users/${USR.member}`)).status).toBe(401);
  });
});

describe('POST /api/svc/v1/organizations/switch (#19)', () => {
  it('sets the current organization: 200 with the organization, and a project created without organization_id lands there', async () => {
    const res = await switchTo(ORG.atelierNord);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organization: ATELIER_NORD });
    const project = await request(t.url, 'POST', `${P}/projects`, {
      token: architect,
      body: { name: 'Après bascule', construction_type: 'office', managers: [{ id: USR.architect }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'QUOTE' },
    });
    expect(project.status).toBe(201);
    expect(project.body.project.organization_id).toBe(ORG.atelierNord);

    const back = await switchTo(ORG.atelierDemo);
    expect(back.body).toEqual({ organization: ATELIER_DEMO });
    const again = await request(t.url, 'POST', `${P}/projects`, {
      token: architect,
      body: { name: 'Retour', construction_type: 'office', managers: [{ id: USR.architect }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'QUOTE' },
    });
    expect(again.body.project.organization_id).toBe(ORG.atelierDemo);
  });

  it('answers identically on the alias path, and switching to the current one is fine', async () => {
    const res = await both('POST', '/organizations/switch', architect, { organization_id: ORG.atelierDemo });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organization: ATELIER_DEMO });
  });

  it('answers 404 for an organization where the caller is not Administrator, and keeps the current one', async () => {
    const foreign = await switchTo(ORG.cabinetSud);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(ORG_NOT_FOUND);
    expect(foreign.text).not.toContain('Cabinet');
    const unknown = await switchTo(UNKNOWN);
    expect(unknown.body).toEqual(ORG_NOT_FOUND);
    const contractor = await switchTo(ORG.batimentsDurand);
    expect(contractor.body).toEqual(ORG_NOT_FOUND);
    const project = await request(t.url, 'POST', `${P}/projects`, {
      token: architect,
      body: { name: 'Toujours Demo', construction_type: 'office', managers: [{ id: USR.architect }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF' },
    });
    expect(project.body.project.organization_id).toBe(ORG.atelierDemo);
  });

  it('requires organization_id as a UUID and refuses other fields', async () => {
    const missing = await both('POST', '/organizations/switch', architect, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'organization_id', message: 'is required' }] });
    const malformed = await switchTo('atelier-nord');
    expect(malformed.body.errors).toEqual([{ field: 'organization_id', message: 'must be a UUID' }]);
    const extra = await request(t.url, 'POST', `${P}/organizations/switch`, { token: architect, body: { organization_id: ORG.atelierNord, user_id: USR.member } });
    expect(extra.status).toBe(400);
    expect(extra.body.errors).toEqual([{ field: 'user_id', message: 'is not accepted by this operation' }]);
    const camel = await request(t.url, 'POST', `${P}/organizations/switch`, { token: architect, body: { organizationId: ORG.atelierNord } });
    expect(camel.status).toBe(400);
  });

  it('answers 400 for malformed JSON and for a missing body', async () => {
    const bad = await request(t.url, 'POST', `${P}/organizations/switch`, { token: architect, raw: '{"organization_id":', headers: { 'Content-Type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ code: 400, message: 'The request body is not valid JSON' });
    const none = await request(t.url, 'POST', `${P}/organizations/switch`, { token: architect });
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual([{ field: 'organization_id', message: 'is required' }]);
  });

  it('answers 401 without a token', async () => {
    const res = await both('POST', '/organizations/switch', undefined, { organization_id: ORG.atelierNord });
    expect(res.status).toBe(401);
  });
});

describe('GET /api/svc/v1/organizations/{organizationId} (#20)', () => {
  it('answers the organization under `organization`, field for field', async () => {
    const res = await both('GET', `/organizations/${ORG.atelierDemo}`, architect);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organization: ATELIER_DEMO });
    expect((await both('GET', `/organizations/${ORG.cabinetSud}`, other)).body).toEqual({ organization: CABINET_SUD });
  });

  it('reads a UUID written in upper case as the same organization', async () => {
    const res = await both('GET', `/organizations/${ORG.atelierDemo.toUpperCase()}`, architect);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organization: ATELIER_DEMO });
    const narrowed = await request(t.url, 'GET', `${P}/projects?organization_id=${ORG.atelierNord.toUpperCase()}`, { token: architect });
    expect(narrowed.status).toBe(200);
    const orgs = narrowed.body.projects.map((p: { organization_id: string }) => p.organization_id);
    expect(orgs.length).toBeGreaterThan(0);
    expect(new Set(orgs)).toEqual(new Set([ORG.atelierNord]));
  });

  it('answers 404 for another organization, exactly like an unknown id, never its data', async () => {
    const foreign = await both('GET', `/organizations/${ORG.cabinetSud}`, architect);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(ORG_NOT_FOUND);
    expect(foreign.text).not.toContain('Mirabeau');
    const unknown = await both('GET', `/organizations/${UNKNOWN}`, architect);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(ORG_NOT_FOUND);
    const back = await both('GET', `/organizations/${ORG.atelierDemo}`, other);
    expect(back.body).toEqual(ORG_NOT_FOUND);
  });

  it('answers 404 for a contractor company', async () => {
    expect((await both('GET', `/organizations/${ORG.batimentsDurand}`, architect)).body).toEqual(ORG_NOT_FOUND);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const res = await both('GET', '/organizations/atelier-demo', architect);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'organizationId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token', async () => {
    expect((await both('GET', `/organizations/${ORG.atelierDemo}`)).status).toBe(401);
  });
});

describe('GET /api/svc/v1/organizations/headquarters/{organizationId} (#21)', () => {
  const GROUPE_DEMO = {
    id: DEMO_IDS.headquarter, name: 'Groupe Demo',
    organizations: [{ id: ORG.atelierDemo, name: 'Atelier Demo' }, { id: ORG.atelierNord, name: 'Atelier Nord' }],
    created_at: '2026-01-05T08:30:00.000000Z', updated_at: '2026-01-05T08:30:00.000000Z',
  };

  it('answers the headquarter of the organization with its member organizations', async () => {
    const res = await both('GET', `/organizations/headquarters/${ORG.atelierDemo}`, architect);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ headquarter: GROUPE_DEMO });
    expect((await both('GET', `/organizations/headquarters/${ORG.atelierNord}`, architect)).body).toEqual({ headquarter: GROUPE_DEMO });
  });

  it('answers 404 for an organization that belongs to no headquarter', async () => {
    const res = await both('GET', `/organizations/headquarters/${ORG.cabinetSud}`, other);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'The organization belongs to no headquarter' });
  });

  it('answers 404 for another organization and an unknown id, never the headquarter', async () => {
    const foreign = await both('GET', `/organizations/headquarters/${ORG.atelierDemo}`, other);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(ORG_NOT_FOUND);
    expect(foreign.text).not.toContain('Groupe');
    expect((await both('GET', `/organizations/headquarters/${ORG.cabinetSud}`, architect)).body).toEqual(ORG_NOT_FOUND);
    expect((await both('GET', `/organizations/headquarters/${UNKNOWN}`, architect)).body).toEqual(ORG_NOT_FOUND);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    const res = await both('GET', '/organizations/headquarters/demo', architect);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'organizationId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token', async () => {
    expect((await both('GET', `/organizations/headquarters/${ORG.atelierDemo}`)).status).toBe(401);
  });
});
