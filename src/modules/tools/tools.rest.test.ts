import { DEMO_IDS, demoLegacyId } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const IDS_TO_UUIDS = '/api/svc/v1/tools/ids-to-uuids';
const UUIDS_TO_IDS = '/api/internal/v1/tools/uuids-to-ids';
const ORG = DEMO_IDS.organizations;
const USR = DEMO_IDS.users;
const UNKNOWN_LEGACY = 'ZZZZZZZZZZZZZZZZZ';
const UNKNOWN_UUID = '0b7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a';

/** Records of Atelier Demo / Atelier Nord (architect@demo.test's) and of Cabinet Sud (other@demo.test's). */
const MINE = [
  ORG.atelierDemo, ORG.atelierNord, USR.architect, USR.member, DEMO_IDS.headquarter, DEMO_IDS.projects.residence,
  DEMO_IDS.projects.nordOffices, DEMO_IDS.projectTrades.residence['01'], DEMO_IDS.templates.residenceGrosOeuvreTranche1,
  DEMO_IDS.documents.residenceGoDurand, DEMO_IDS.contractors.batimentsDurand, DEMO_IDS.tradeLists.standard,
  DEMO_IDS.tradeLists.atelierDemo, DEMO_IDS.tradeListTrades.atelierDemo['03'],
];
const THEIRS = [
  ORG.cabinetSud, USR.other, DEMO_IDS.projects.cabinetSudHall, DEMO_IDS.projectTrades.cabinetSudHall['01'],
  DEMO_IDS.templates.cabinetSudCharpente, DEMO_IDS.documents.sudCharpenteVercors, DEMO_IDS.contractors.sudCharpentesVercors,
  DEMO_IDS.tradeLists.cabinetSud, DEMO_IDS.tradeListTrades.cabinetSud['01'],
];

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

describe('POST /api/svc/v1/tools/ids-to-uuids (#25)', () => {
  it('converts legacy identifiers to UUIDs keeping the request\'s nesting, null for unknown ones', async () => {
    const body = {
      resources: [
        [demoLegacyId(ORG.atelierDemo), demoLegacyId(DEMO_IDS.projects.residence)],
        [],
        [UNKNOWN_LEGACY, demoLegacyId(DEMO_IDS.documents.residenceGoDurand), demoLegacyId(ORG.atelierDemo)],
      ],
    };
    const res = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      resources: [[ORG.atelierDemo, DEMO_IDS.projects.residence], [], [null, DEMO_IDS.documents.residenceGoDurand, ORG.atelierDemo]],
    });
  });

  it('converts every kind of record the caller may see: organizations, users, projects, trades, templates, documents, contractors, trade lists', async () => {
    const res = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body: { resources: [MINE.map(demoLegacyId)] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ resources: [MINE] });
  });

  it('answers null for records of an organization where the caller is not Administrator, as for unknown ones', async () => {
    const res = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body: { resources: [THEIRS.map(demoLegacyId)] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ resources: [THEIRS.map(() => null)] });
    // Contacts of contractor companies belong to no organization of the caller either.
    const contact = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body: { resources: [[demoLegacyId(USR.pierreDurand)]] } });
    expect(contact.body).toEqual({ resources: [[null]] });
    const theirs = await request(t.url, 'POST', IDS_TO_UUIDS, { token: other, body: { resources: [THEIRS.map(demoLegacyId), [demoLegacyId(ORG.atelierDemo)]] } });
    expect(theirs.body).toEqual({ resources: [THEIRS, [null]] });
  });

  it('answers an empty list when no body, an empty object or resources null is sent', async () => {
    const none = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ resources: [] });
    for (const body of [{}, { resources: null }, { resources: [] }]) {
      const res = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ resources: [] });
    }
  });

  it('runs the same number of SQL statements for 2 and for 40 identifiers', async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => demoLegacyId(MINE[i % MINE.length]));
    const run = (n: number) => t.queries.measure(() => request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body: { resources: [ids(n / 2), ids(n / 2)] } }));
    const two = await run(2);
    const forty = await run(40);
    expect(two.result.status).toBe(200);
    expect(forty.result.body.resources[1]).toHaveLength(20);
    expect(forty.result.body.resources[1][19]).toBe(MINE[19 % MINE.length]);
    expect(forty.statements).toBe(two.statements);
    // Authentication's statement and the conversion itself, one statement for all identifiers.
    expect(two.sql.filter((s) => s.includes('legacy_id'))).toHaveLength(1);
  });

  it('answers 400 naming resources when it is not an array', async () => {
    const res = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body: { resources: 'DEMOORG0000000001' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'resources', message: 'must be an array' }] });
  });

  it('answers 400 naming each item that is not an array of identifiers, by its path', async () => {
    const res = await request(t.url, 'POST', IDS_TO_UUIDS, {
      token: architect,
      body: { resources: [[demoLegacyId(ORG.atelierDemo), 'DEMOORG000000001'], 'DEMOORG0000000001', [42, 'DEMOORG00000000001']] },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400, message: 'The request is not valid', errors: [
        { field: 'resources.0.1', message: 'must be 17 characters long' },
        { field: 'resources.1', message: 'must be an array' },
        { field: 'resources.2.0', message: 'must be a string' },
        { field: 'resources.2.1', message: 'must be 17 characters long' },
      ],
    });
  });

  it('answers 400 for a field the operation does not accept, and for a body that is not an object', async () => {
    const res = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body: { resources: [], ids: [] } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'ids', message: 'is not accepted by this operation' }]);
    const list = await request(t.url, 'POST', IDS_TO_UUIDS, { token: architect, body: [['DEMOORG0000000001']] });
    expect(list.status).toBe(400);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'POST', IDS_TO_UUIDS, { body: { resources: [[demoLegacyId(ORG.atelierDemo)]] } });
    expect(res.status).toBe(401);
  });
});

describe('POST /api/internal/v1/tools/uuids-to-ids (#32)', () => {
  it('converts UUIDs to legacy identifiers keeping the request\'s nesting, null for unknown ones', async () => {
    const res = await request(t.url, 'POST', UUIDS_TO_IDS, {
      token: architect,
      body: { resources: [[DEMO_IDS.templates.residenceCharpente], [UNKNOWN_UUID, USR.architect.toUpperCase()], []] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      resources: [[demoLegacyId(DEMO_IDS.templates.residenceCharpente)], [null, demoLegacyId(USR.architect)], []],
    });
  });

  it('converts every kind of record the caller may see', async () => {
    const res = await request(t.url, 'POST', UUIDS_TO_IDS, { token: architect, body: { resources: [MINE] } });
    expect(res.body).toEqual({ resources: [MINE.map(demoLegacyId)] });
  });

  it('answers null for records of an organization where the caller is not Administrator', async () => {
    const res = await request(t.url, 'POST', UUIDS_TO_IDS, { token: architect, body: { resources: [THEIRS] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ resources: [THEIRS.map(() => null)] });
    const theirs = await request(t.url, 'POST', UUIDS_TO_IDS, { token: other, body: { resources: [THEIRS] } });
    expect(theirs.body).toEqual({ resources: [THEIRS.map(demoLegacyId)] });
  });

  it('answers an empty list when no body is sent', async () => {
    const res = await request(t.url, 'POST', UUIDS_TO_IDS, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ resources: [] });
  });

  it('runs the same number of SQL statements for 2 and for 40 identifiers', async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => (i < MINE.length ? MINE[i] : `0b7e3c1a-5f7d-4c2e-9a61-${String(i).padStart(12, '0')}`));
    const two = await t.queries.measure(() => request(t.url, 'POST', UUIDS_TO_IDS, { token: architect, body: { resources: [ids(2)] } }));
    const forty = await t.queries.measure(() => request(t.url, 'POST', UUIDS_TO_IDS, { token: architect, body: { resources: [ids(40)] } }));
    expect(forty.result.body.resources[0].filter((v: string | null) => v !== null)).toHaveLength(MINE.length);
    expect(forty.statements).toBe(two.statements);
  });

  it('answers 400 naming each identifier that is not a 36-character UUID, by its path', async () => {
    const res = await request(t.url, 'POST', UUIDS_TO_IDS, {
      token: architect,
      body: { resources: [[ORG.atelierDemo, demoLegacyId(ORG.atelierDemo)], [null, 'zb7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a']] },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400, message: 'The request is not valid', errors: [
        { field: 'resources.0.1', message: 'must be 36 characters long' },
        { field: 'resources.1.0', message: 'must be a string' },
        { field: 'resources.1.1', message: 'must be a UUID' },
      ],
    });
    const flat = await request(t.url, 'POST', UUIDS_TO_IDS, { token: architect, body: { resources: { a: ORG.atelierDemo } } });
    expect(flat.status).toBe(400);
    expect(flat.body.errors).toEqual([{ field: 'resources', message: 'must be an array' }]);
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'POST', UUIDS_TO_IDS, { body: { resources: [[ORG.atelierDemo]] } })).status).toBe(401);
  });
});
