import { DEMO_IDS, DEMO_SIRETS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const P = '/api/svc/v1';
const ORG = DEMO_IDS.organizations;
const CTR = DEMO_IDS.contractors;
const LISTS = DEMO_IDS.tradeLists;
const UNKNOWN = '0b7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a';

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

describe('GET /api/svc/v1/contractors/{contractorId} (#22)', () => {
  it('answers the directory entry of the current organization with its fields', async () => {
    const res = await request(t.url, 'GET', `${P}/contractors/${CTR.batimentsDurand}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      contractor: {
        id: CTR.batimentsDurand,
        name: 'Bâtiments Durand SAS',
        email: 'p.durand@batiments-durand.fr',
        phone: '04 78 58 12 30',
        information: { fiscal_number: DEMO_SIRETS.shared },
        company_id: ORG.batimentsDurand,
        created_at: '2026-02-01T09:00:00.000000Z',
        updated_at: '2026-02-01T09:00:00.000000Z',
      },
    });
  });

  it('gives null, never a missing field, for a phone, SIRET or company the entry lacks', async () => {
    const res = await request(t.url, 'GET', `${P}/contractors/${CTR.elecServices}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.contractor).toMatchObject({ name: 'Élec Services 69', information: { fiscal_number: null }, company_id: null });
    const moreau = await request(t.url, 'GET', `${P}/contractors/${CTR.btpMoreau}`, { token: architect });
    expect(moreau.body.contractor).toMatchObject({ phone: null, information: { fiscal_number: '79845612300028' }, company_id: null });
  });

  it('finds the entry whatever the case of the UUID', async () => {
    const res = await request(t.url, 'GET', `${P}/contractors/${CTR.batimentsDurand.toUpperCase()}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.contractor.id).toBe(CTR.batimentsDurand);
  });

  it('answers 404 for an entry of another Administrator organization than the current one, until the caller switches to it', async () => {
    const before = await request(t.url, 'GET', `${P}/contractors/${CTR.nordCourantsLambert}`, { token: architect });
    expect(before.status).toBe(404);
    expect(before.body).toEqual({ code: 404, message: 'Contractor not found' });
    const switched = await request(t.url, 'POST', `${P}/organizations/switch`, { token: architect, body: { organization_id: ORG.atelierNord } });
    expect(switched.status).toBe(200);
    try {
      const after = await request(t.url, 'GET', `${P}/contractors/${CTR.nordCourantsLambert}`, { token: architect });
      expect(after.status).toBe(200);
      expect(after.body.contractor.name).toBe('Courants Faibles Lambert');
      const demoEntry = await request(t.url, 'GET', `${P}/contractors/${CTR.batimentsDurand}`, { token: architect });
      expect(demoEntry.status).toBe(404);
    } finally {
      await request(t.url, 'POST', `${P}/organizations/switch`, { token: architect, body: { organization_id: ORG.atelierDemo } });
    }
  });

  it('never shows an entry of another organization\'s directory: 404 like an unknown id', async () => {
    const res = await request(t.url, 'GET', `${P}/contractors/${CTR.sudCharpentesVercors}`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Contractor not found' });
    expect(res.text).not.toContain('Vercors');
    const own = await request(t.url, 'GET', `${P}/contractors/${CTR.sudCharpentesVercors}`, { token: other });
    expect(own.status).toBe(200);
    expect((await request(t.url, 'GET', `${P}/contractors/${CTR.batimentsDurand}`, { token: other })).status).toBe(404);
  });

  it('answers 404 for an unknown id', async () => {
    const res = await request(t.url, 'GET', `${P}/contractors/${UNKNOWN}`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Contractor not found' });
  });

  it('answers 400 naming contractorId when the id is not a UUID', async () => {
    const res = await request(t.url, 'GET', `${P}/contractors/not-a-uuid`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'contractorId', message: 'must be a UUID' }] });
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'GET', `${P}/contractors/${CTR.batimentsDurand}`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(401);
  });
});

describe('GET /api/svc/v1/trades/list (#23)', () => {
  it('lists the public trade lists, then those of the caller\'s Administrator organizations', async () => {
    const res = await request(t.url, 'GET', `${P}/trades/list`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      trade_lists: [
        {
          id: LISTS.standard, name: 'Lots standard bâtiment', organization_id: null,
          created_at: '2026-01-02T08:00:00.000000Z', updated_at: '2026-01-02T08:00:00.000000Z',
        },
        {
          id: LISTS.atelierDemo, name: 'Réhabilitation – lots Atelier Demo', organization_id: ORG.atelierDemo,
          created_at: '2026-01-20T14:00:00.000000Z', updated_at: '2026-01-20T14:00:00.000000Z',
        },
      ],
    });
  });

  it('never lists another organization\'s private list', async () => {
    const res = await request(t.url, 'GET', `${P}/trades/list`, { token: other });
    expect(res.status).toBe(200);
    expect(res.body.trade_lists.map((l: { id: string }) => l.id)).toEqual([LISTS.standard, LISTS.cabinetSud]);
    const architectLists = await request(t.url, 'GET', `${P}/trades/list`, { token: architect });
    expect(architectLists.text).not.toContain('Cabinet Sud');
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${P}/trades/list`)).status).toBe(401);
  });
});

describe('GET /api/svc/v1/trades/list/{tradeListId} (#24)', () => {
  it('answers the list with its trades ordered by number', async () => {
    const res = await request(t.url, 'GET', `${P}/trades/list/${LISTS.atelierDemo}`, { token: architect });
    expect(res.status).toBe(200);
    const ids = DEMO_IDS.tradeListTrades.atelierDemo;
    expect(res.body).toEqual({
      trade_list: {
        id: LISTS.atelierDemo, name: 'Réhabilitation – lots Atelier Demo', organization_id: ORG.atelierDemo,
        created_at: '2026-01-20T14:00:00.000000Z', updated_at: '2026-01-20T14:00:00.000000Z',
        trades: [
          { id: ids['01'], number: '01', name: 'Désamiantage', short_name: 'DES' },
          { id: ids['02'], number: '02', name: 'Curage et démolition', short_name: 'DEM' },
          { id: ids['03'], number: '03', name: 'Gros œuvre', short_name: 'GO' },
          { id: ids['04'], number: '04', name: 'Menuiseries intérieures', short_name: 'MI' },
          { id: ids['05'], number: '05', name: 'Revêtements de sols', short_name: 'RS' },
        ],
      },
    });
  });

  it('answers a public list to every caller', async () => {
    for (const token of [architect, other]) {
      const res = await request(t.url, 'GET', `${P}/trades/list/${LISTS.standard}`, { token });
      expect(res.status).toBe(200);
      expect(res.body.trade_list.organization_id).toBeNull();
      expect(res.body.trade_list.trades).toHaveLength(8);
      expect(res.body.trade_list.trades[0]).toEqual({ id: DEMO_IDS.tradeListTrades.standard['01'], number: '01', name: 'Gros œuvre', short_name: 'GO' });
    }
  });

  it('answers 404 for another organization\'s private list, like an unknown id', async () => {
    const res = await request(t.url, 'GET', `${P}/trades/list/${LISTS.cabinetSud}`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Trade list not found' });
    expect((await request(t.url, 'GET', `${P}/trades/list/${LISTS.atelierDemo}`, { token: other })).status).toBe(404);
  });

  it('answers 404 for an unknown id', async () => {
    const res = await request(t.url, 'GET', `${P}/trades/list/${UNKNOWN}`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Trade list not found' });
  });

  it('answers 400 naming tradeListId when the id is not a UUID', async () => {
    const res = await request(t.url, 'GET', `${P}/trades/list/12`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'tradeListId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${P}/trades/list/${LISTS.standard}`)).status).toBe(401);
  });
});
