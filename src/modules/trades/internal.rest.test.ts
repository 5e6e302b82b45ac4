import http from 'node:http';
import { DEMO_IDS, DEMO_SIRETS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const I = '/api/internal/v1';
const ORG = DEMO_IDS.organizations;
const CAT = DEMO_IDS.tradeCategories;
const PT = DEMO_IDS.projectTrades;
const UNKNOWN = '0b7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a';

const STRUCTURE = { id: CAT.structure, code: 'STRUCTURE', name: 'Gros œuvre et structure' };
const ENVELOPPE = { id: CAT.enveloppe, code: 'ENVELOPPE', name: 'Clos et couvert' };
const ELECTRICITE = { id: CAT.electricite, code: 'ELECTRICITE', name: 'Électricité courants forts et faibles' };
const VRD = { id: CAT.vrd, code: 'VRD', name: 'Voirie et réseaux divers' };

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

const byName = (name: string, token = architect) => request(t.url, 'GET', `${I}/trades/mapping/${encodeURIComponent(name)}`, { token });

describe('GET /api/internal/v1/trades/mapping/{tradeName} (#29)', () => {
  it('answers the categories of a trade name', async () => {
    const res = await byName('Gros œuvre');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ categories: [STRUCTURE] });
  });

  it('ignores case and accents, ligatures included', async () => {
    for (const name of ['GROS OEUVRE', 'gros oeuvre', 'Gros Œuvre', ' gros œuvre ']) {
      expect((await byName(name)).body).toEqual({ categories: [STRUCTURE] });
    }
    for (const name of ['electricite', 'ÉLECTRICITÉ', 'Electricité']) {
      expect((await byName(name)).body).toEqual({ categories: [ELECTRICITE] });
    }
  });

  it('lists every category of a trade mapped to several, by code', async () => {
    expect((await byName('charpente')).body).toEqual({ categories: [ENVELOPPE, STRUCTURE] });
  });

  it('answers the same reference data to every caller: categories belong to no organization', async () => {
    expect((await byName('Voirie et réseaux divers', architect)).body).toEqual({ categories: [VRD] });
    expect((await byName('gros oeuvre', other)).body).toEqual({ categories: [STRUCTURE] });
  });

  it('answers 404 for a trade name no mapping knows', async () => {
    const res = await byName('Terrassement');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'No trade category is mapped to this trade' });
  });

  it('answers 400 for a name longer than 255 characters', async () => {
    const res = await byName('x'.repeat(256));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'tradeName', message: 'must be at most 255 characters long' }]);
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${I}/trades/mapping/charpente`)).status).toBe(401);
  });
});

describe('GET /api/internal/v1/trades/mapping/svc/{tradeId} (#30)', () => {
  it('answers the categories of a service trade (a trade-list trade)', async () => {
    const res = await request(t.url, 'GET', `${I}/trades/mapping/svc/${DEMO_IDS.tradeListTrades.standard['02']}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ categories: [ENVELOPPE, STRUCTURE] });
    const upper = await request(t.url, 'GET', `${I}/trades/mapping/svc/${DEMO_IDS.tradeListTrades.standard['06'].toUpperCase()}`, { token: architect });
    expect(upper.body).toEqual({ categories: [ELECTRICITE] });
  });

  it('is not read as the trade name "svc"', async () => {
    const res = await request(t.url, 'GET', `${I}/trades/mapping/svc/${DEMO_IDS.tradeListTrades.cabinetSud['01']}`, { token: other });
    expect(res.body).toEqual({ categories: [VRD] });
  });

  it('answers 404 for an unknown service trade', async () => {
    const res = await request(t.url, 'GET', `${I}/trades/mapping/svc/${UNKNOWN}`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'No trade category is mapped to this trade' });
  });

  it('answers 400 naming tradeId when it is not a UUID', async () => {
    const res = await request(t.url, 'GET', `${I}/trades/mapping/svc/1001`, { token: architect });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'tradeId', message: 'must be a UUID' }] });
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${I}/trades/mapping/svc/${DEMO_IDS.tradeListTrades.standard['02']}`)).status).toBe(401);
  });
});

describe('GET /api/internal/v1/trades/mapping/partner/{tradeId} (#31)', () => {
  it('answers the categories of a partner-platform trade', async () => {
    const one = await request(t.url, 'GET', `${I}/trades/mapping/partner/1001`, { token: architect });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ categories: [STRUCTURE] });
    const two = await request(t.url, 'GET', `${I}/trades/mapping/partner/1002`, { token: architect });
    expect(two.body).toEqual({ categories: [ENVELOPPE, STRUCTURE] });
  });

  it('answers 404 for an unknown partner trade', async () => {
    const res = await request(t.url, 'GET', `${I}/trades/mapping/partner/9999`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'No trade category is mapped to this trade' });
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${I}/trades/mapping/partner/1001`)).status).toBe(401);
  });
});

/** A GET with a JSON body, which fetch refuses to send. */
function getWithBody(path: string, token: string, body: unknown): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(t.url + path, {
      method: 'GET',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const SIRET_400 = { code: 400, message: 'The SIRET must be 14 digits', errors: [{ field: 'siret', message: 'must be 14 digits' }] };
const siret404 = (siret: string) => ({ code: 404, message: 'No contractor organization has this SIRET', siret, data: [] });

describe('GET /api/internal/v1/company/contacts/{siret} (#33)', () => {
  it('answers the users of every contractor organization with that SIRET as contacts', async () => {
    const res = await request(t.url, 'GET', `${I}/company/contacts/${DEMO_SIRETS.shared}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      siret: DEMO_SIRETS.shared,
      companies: [
        {
          id: ORG.batimentsDurand, name: 'Bâtiments Durand SAS', contacts: [
            { first_name: 'Nathalie', last_name: 'Durand', email: 'n.durand@batiments-durand.fr', phone: '04 78 58 12 31', mobile: null },
            { first_name: 'Pierre', last_name: 'Durand', email: 'p.durand@batiments-durand.fr', phone: '04 78 58 12 30', mobile: '06 72 45 18 90' },
          ],
        },
        {
          id: ORG.durandRenovation, name: 'Durand Rénovation', contacts: [
            { first_name: 'Antoine', last_name: 'Durand', email: 'contact@durand-renovation.fr', phone: '04 76 43 22 10', mobile: '06 81 27 63 04' },
          ],
        },
      ],
    });
  });

  it('answers a single company for a SIRET only one has', async () => {
    const res = await request(t.url, 'GET', `${I}/company/contacts/${DEMO_SIRETS.single}`, { token: architect });
    expect(res.body).toEqual({
      siret: DEMO_SIRETS.single,
      companies: [{
        id: ORG.electriciteMartin, name: 'Électricité Martin SARL',
        contacts: [{ first_name: 'Luc', last_name: 'Martin', email: 'luc.martin@electricite-martin.fr', phone: '04 72 33 90 14', mobile: '06 14 92 37 58' }],
      }],
    });
  });

  it('shows only companies the caller\'s own directory links to; others answer like an unknown SIRET', async () => {
    const mine = await request(t.url, 'GET', `${I}/company/contacts/${DEMO_SIRETS.shared}`, { token: architect });
    expect(mine.status).toBe(200);
    const theirs = await request(t.url, 'GET', `${I}/company/contacts/${DEMO_SIRETS.shared}`, { token: other });
    const unknown = await request(t.url, 'GET', `${I}/company/contacts/12345678901234`, { token: other });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ ...unknown.body, siret: DEMO_SIRETS.shared });
    expect(theirs.text).not.toMatch(/Durand/);
    const shared = await request(t.url, 'GET', `${I}/company/contacts/44306184100047`, { token: other });
    expect(shared.body.companies.map((c: { name: string }) => c.name)).toEqual(['Charpentes du Vercors']);
  });

  it('reads the SIRET from the path and ignores a body sent with the GET', async () => {
    const res = await getWithBody(`${I}/company/contacts/${DEMO_SIRETS.single}`, architect, { siret: DEMO_SIRETS.shared });
    expect(res.status).toBe(200);
    expect(res.body.siret).toBe(DEMO_SIRETS.single);
    expect(res.body.companies.map((c: { id: string }) => c.id)).toEqual([ORG.electriciteMartin]);
    const badBody = await getWithBody(`${I}/company/contacts/${DEMO_SIRETS.single}`, architect, { siret: 'nope', other: 1 });
    expect(badBody.status).toBe(200);
  });

  it('answers 400 saying the SIRET must be 14 digits', async () => {
    for (const siret of ['7328293200007', '732829320000745', '7328293200007A', 'abcdefghijklmn']) {
      const res = await request(t.url, 'GET', `${I}/company/contacts/${siret}`, { token: architect });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(SIRET_400);
    }
  });

  it('answers 404 with the siret and an empty data list when no contractor organization has that SIRET', async () => {
    const res = await request(t.url, 'GET', `${I}/company/contacts/00000000000000`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(siret404('00000000000000'));
  });

  it('answers 404 for the SIRET of an architect organization, or of a directory entry linked to no company', async () => {
    for (const siret of ['81234567800016', '83456789000035', '79845612300028']) {
      const res = await request(t.url, 'GET', `${I}/company/contacts/${siret}`, { token: architect });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(siret404(siret));
    }
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${I}/company/contacts/${DEMO_SIRETS.shared}`)).status).toBe(401);
  });
});

describe('GET /api/internal/v1/company/trades/{siret} (#34)', () => {
  it('answers business sectors and the trades each company was consulted on, each trade once', async () => {
    const res = await request(t.url, 'GET', `${I}/company/trades/${DEMO_SIRETS.shared}`, { token: architect });
    expect(res.status).toBe(200);
    // Both Durand companies were invited on residence lots 01 (template and its slices) and 02, and school lot 04.
    const trades = [
      { id: PT.residence['02'], name: 'Charpente' },
      { id: PT.residence['01'], name: 'Gros œuvre' },
      { id: PT.school['04'], name: 'Menuiseries intérieures' },
    ];
    expect(res.body).toEqual({
      siret: DEMO_SIRETS.shared,
      companies: [
        { id: ORG.batimentsDurand, name: 'Bâtiments Durand SAS', business_sectors: ['Construction', 'Gros œuvre', 'Maçonnerie'], trades },
        { id: ORG.durandRenovation, name: 'Durand Rénovation', business_sectors: ['Construction', 'Rénovation'], trades },
      ],
    });
  });

  it('includes the trades of every organization where the caller is Administrator', async () => {
    const res = await request(t.url, 'GET', `${I}/company/trades/${DEMO_SIRETS.single}`, { token: architect });
    expect(res.body.companies).toEqual([{
      id: ORG.electriciteMartin, name: 'Électricité Martin SARL', business_sectors: ['Construction', 'Électricité'],
      trades: [PT.nordOffices['06'], PT.residence['06']].sort().map((id) => ({ id, name: 'Électricité' })),
    }]);
  });

  it('never shows trades of another organization\'s projects', async () => {
    const mine = await request(t.url, 'GET', `${I}/company/trades/44306184100047`, { token: architect });
    expect(mine.body.companies).toEqual([{
      id: ORG.charpentesVercors, name: 'Charpentes du Vercors', business_sectors: ['Charpente', 'Couverture'],
      trades: [{ id: PT.residence['02'], name: 'Charpente' }],
    }]);
    expect(mine.text).not.toContain('métallique');
    const theirs = await request(t.url, 'GET', `${I}/company/trades/44306184100047`, { token: other });
    expect(theirs.body.companies[0].trades).toEqual([{ id: PT.cabinetSudHall['02'], name: 'Charpente métallique' }]);
    // Cabinet Sud's directory has no entry for Électricité Martin: it does not exist for them.
    const martin = await request(t.url, 'GET', `${I}/company/trades/${DEMO_SIRETS.single}`, { token: other });
    expect(martin.status).toBe(404);
    expect(martin.body).toEqual({ code: 404, message: 'No contractor organization has this SIRET', siret: DEMO_SIRETS.single, data: [] });
  });

  it('reads the SIRET from the path and ignores a body sent with the GET', async () => {
    const res = await getWithBody(`${I}/company/trades/${DEMO_SIRETS.single}`, architect, { siret: '123' });
    expect(res.status).toBe(200);
    expect(res.body.siret).toBe(DEMO_SIRETS.single);
  });

  it('answers 400 saying the SIRET must be 14 digits', async () => {
    for (const siret of ['123', '7328293200007x']) {
      const res = await request(t.url, 'GET', `${I}/company/trades/${siret}`, { token: architect });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(SIRET_400);
    }
  });

  it('answers 404 with the siret and an empty data list when no contractor organization has that SIRET', async () => {
    const res = await request(t.url, 'GET', `${I}/company/trades/12345678901234`, { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(siret404('12345678901234'));
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', `${I}/company/trades/${DEMO_SIRETS.shared}`)).status).toBe(401);
  });
});
