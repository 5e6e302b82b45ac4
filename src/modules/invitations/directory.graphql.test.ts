import { toRest } from '../../platform/rest/serialize';
import { CreditLedgerEntry } from '../entities';
import { DEMO_IDS, DEMO_SIRETS } from '../../seed/demo-data';
import { formatDay } from '../../platform/values/time';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { answered, gql } from '../../../test/support/graphql';
import { request } from '../../../test/support/http';

let t: TestApp;
let architect: string;
let other: string;

const P = '/api/svc/v1';
const ORG = DEMO_IDS.organizations;
const CTR = DEMO_IDS.contractors;
const LISTS = DEMO_IDS.tradeLists;
const HQ = DEMO_IDS.headquarter;
const UNKNOWN = '0b7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a';
/** Names only Cabinet Sud's records carry: none may appear in an answer to architect@demo.test. */
const CABINET_SUD_NAMES = ['Cabinet Sud', 'Équipements publics', 'Charpente métallique', 'Voirie et réseaux divers'];

const TRADE_LIST = 'id name organizationId createdAt updatedAt';
const CONTRACTOR = 'id name email phone information { fiscalNumber } companyId createdAt updatedAt';
const USAGE = 'total from to scope { type scopeId name } organizations { organizationId name total }';
const CREDITS = `query($from: String, $to: String, $organizationId: ID, $headquarterId: ID) {
  creditsUsage(from: $from, to: $to, organizationId: $organizationId, headquarterId: $headquarterId) { ${USAGE} } }`;

/** Ledger entries of April 2021, far from the demo entries (the last four months); powers of two name what each total counts. */
const LEDGER: Array<[organization: string, at: string, amount: number]> = [
  [ORG.atelierDemo, '2021-03-31T23:59:59.999Z', 1],
  [ORG.atelierDemo, '2021-04-01T00:00:00.000Z', 2],
  [ORG.atelierDemo, '2021-04-30T23:59:59.999Z', 4],
  [ORG.atelierDemo, '2021-05-01T00:00:00.000Z', 8],
  [ORG.atelierNord, '2021-04-10T10:00:00.000Z', 16],
  [ORG.cabinetSud, '2021-04-12T09:00:00.000Z', 32],
];

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
  const em = t.orm.em.fork();
  for (const [organization, at, amount] of LEDGER) {
    em.create(CreditLedgerEntry, { organization, amount, kind: 'INVITATION', createdAt: new Date(at), updatedAt: new Date(at) });
  }
  await em.flush();
});
afterAll(() => t.close());

interface Usage { total: number; from: string; to: string; scope: { type: string; scopeId: string; name: string }; organizations: Array<{ organizationId: string; name: string; total: number }> }
/** A report in REST's words: the scope's and each organization's id are `id` there. */
function asRest(usage: Usage): unknown {
  const { scope: { scopeId, ...scope }, organizations, ...rest } = usage;
  return toRest({ ...rest, scope: { ...scope, id: scopeId }, organizations: organizations.map(({ organizationId, ...o }) => ({ id: organizationId, ...o })) });
}

/** The one error of an answer, with no data. */
function failure(res: { body: { data?: unknown; errors?: Array<{ message: string; extensions: Record<string, unknown> }> } }) {
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.data).toBeNull();
  return res.body.errors![0];
}

describe('Query.tradeLists', () => {
  it('lists the public trade lists, then the caller\'s organizations\' own, equal to REST #23', async () => {
    const res = await gql(t.url, architect, `{ tradeLists { ${TRADE_LIST} } }`);
    expect(res.body).toEqual(answered({ tradeLists: [
      { id: LISTS.standard, name: 'Lots standard bâtiment', organizationId: null, createdAt: '2026-01-02T08:00:00.000000Z', updatedAt: '2026-01-02T08:00:00.000000Z' },
      {
        id: LISTS.atelierDemo, name: 'Réhabilitation – lots Atelier Demo', organizationId: ORG.atelierDemo,
        createdAt: '2026-01-20T14:00:00.000000Z', updatedAt: '2026-01-20T14:00:00.000000Z',
      },
    ] }));
    const rest = await request(t.url, 'GET', `${P}/trades/list`, { token: architect });
    expect(toRest(res.body.data.tradeLists)).toEqual(rest.body.trade_lists);
  });

  it('never lists another organization\'s private list', async () => {
    const theirs = await gql(t.url, other, '{ tradeLists { id } }');
    expect(theirs.body.data.tradeLists.map((l: { id: string }) => l.id)).toEqual([LISTS.standard, LISTS.cabinetSud]);
    const ours = await gql(t.url, architect, `{ tradeLists { ${TRADE_LIST} } }`);
    expect(ours.text).not.toContain(LISTS.cabinetSud);
    for (const name of CABINET_SUD_NAMES) expect(ours.text).not.toContain(name);
  });
});

describe('TradeList.trades', () => {
  it('gives every listed trade list its trades, equal to tradeList(id), in as many statements for 2 lists as for 1', async () => {
    const QUERY = `{ tradeLists { id trades { id number name shortName } } }`;
    const res = await gql(t.url, architect, QUERY);
    const lists = res.body.data.tradeLists as Array<{ id: string; trades: unknown[] }>;
    expect(lists.map((l) => l.id)).toEqual([LISTS.standard, LISTS.atelierDemo]);
    for (const list of lists) {
      const one = await gql(t.url, architect, `query($id: ID!) { tradeList(id: $id) { id trades { id number name shortName } } }`, { id: list.id });
      expect(list).toEqual(one.body.data.tradeList);
    }
    expect(lists.map((l) => l.trades.length)).toEqual([8, 5]);
    const both = await t.queries.measure(() => gql(t.url, architect, QUERY));
    const other1 = await t.queries.measure(() => gql(t.url, other, QUERY));
    expect(other1.result.body.data.tradeLists).toHaveLength(2);
    expect(both.statements).toBe(other1.statements);
  });
});

describe('Query.tradeList', () => {
  const QUERY = `query($id: ID!) { tradeList(id: $id) { ${TRADE_LIST} trades { id number name shortName } } }`;

  it('answers the list with its trades by number, equal to REST #24', async () => {
    const res = await gql(t.url, architect, QUERY, { id: LISTS.atelierDemo });
    const ids = DEMO_IDS.tradeListTrades.atelierDemo;
    expect(res.body.data.tradeList).toEqual({
      id: LISTS.atelierDemo, name: 'Réhabilitation – lots Atelier Demo', organizationId: ORG.atelierDemo,
      createdAt: '2026-01-20T14:00:00.000000Z', updatedAt: '2026-01-20T14:00:00.000000Z',
      trades: [
        { id: ids['01'], number: '01', name: 'Désamiantage', shortName: 'DES' },
        { id: ids['02'], number: '02', name: 'Curage et démolition', shortName: 'DEM' },
        { id: ids['03'], number: '03', name: 'Gros œuvre', shortName: 'GO' },
        { id: ids['04'], number: '04', name: 'Menuiseries intérieures', shortName: 'MI' },
        { id: ids['05'], number: '05', name: 'Revêtements de sols', shortName: 'RS' },
      ],
    });
    const rest = await request(t.url, 'GET', `${P}/trades/list/${LISTS.atelierDemo}`, { token: architect });
    expect(toRest(res.body.data.tradeList)).toEqual(rest.body.trade_list);
  });

  it('answers a public list to every caller', async () => {
    for (const token of [architect, other]) {
      const res = await gql(t.url, token, QUERY, { id: LISTS.standard });
      expect(res.body.data.tradeList.organizationId).toBeNull();
      expect(res.body.data.tradeList.trades).toHaveLength(8);
    }
  });

  it('answers NOT_FOUND for another organization\'s private list, like an unknown id, never its trades', async () => {
    const foreign = await gql(t.url, architect, QUERY, { id: LISTS.cabinetSud });
    const unknown = await gql(t.url, architect, QUERY, { id: UNKNOWN });
    expect(failure(foreign).extensions).toEqual({ code: 'NOT_FOUND' });
    expect(failure(foreign).message).toBe(failure(unknown).message);
    for (const name of CABINET_SUD_NAMES) expect(foreign.text).not.toContain(name);
    expect(foreign.text).not.toContain(DEMO_IDS.tradeListTrades.cabinetSud['01']);
  });

  it('answers BAD_USER_INPUT naming `id` when it is not a UUID', async () => {
    const res = await gql(t.url, architect, QUERY, { id: 'standard' });
    expect(failure(res).extensions).toEqual({ code: 'BAD_USER_INPUT', errors: [{ field: 'id', message: 'must be a UUID' }] });
  });
});

describe('Query.contractor', () => {
  const QUERY = `query($id: ID!) { contractor(id: $id) { ${CONTRACTOR} } }`;

  it('answers the entry of the current organization\'s directory, equal to REST #22', async () => {
    const res = await gql(t.url, architect, QUERY, { id: CTR.batimentsDurand });
    expect(res.body).toEqual(answered({ contractor: {
      id: CTR.batimentsDurand, name: 'Bâtiments Durand SAS', email: 'p.durand@batiments-durand.fr', phone: '04 78 58 12 30',
      information: { fiscalNumber: DEMO_SIRETS.shared }, companyId: ORG.batimentsDurand,
      createdAt: '2026-02-01T09:00:00.000000Z', updatedAt: '2026-02-01T09:00:00.000000Z',
    } }));
    for (const id of [CTR.batimentsDurand, CTR.btpMoreau, CTR.elecServices]) {
      const graphql = await gql(t.url, architect, QUERY, { id });
      const rest = await request(t.url, 'GET', `${P}/contractors/${id}`, { token: architect });
      expect(toRest(graphql.body.data.contractor)).toEqual(rest.body.contractor);
    }
  });

  it('is the same Contractor record as the contractor of a document, every field equal', async () => {
    const res = await gql(t.url, architect, `query($id: ID!, $p: ID!) { contractor(id: $id) { ${CONTRACTOR} }
      project(id: $p) { templates { documents { contractor { ${CONTRACTOR} } } } } }`, { id: CTR.batimentsDurand, p: DEMO_IDS.projects.residence });
    const fromDocuments = res.body.data.project.templates.flatMap((x: { documents: Array<{ contractor: { id: string } }> }) => x.documents.map((d) => d.contractor))
      .filter((c: { id: string }) => c.id === CTR.batimentsDurand);
    expect(fromDocuments.length).toBeGreaterThan(0);
    for (const c of fromDocuments) expect(c).toEqual(res.body.data.contractor);
  });

  it('gives null for a phone, SIRET or company the entry lacks', async () => {
    const res = await gql(t.url, architect, QUERY, { id: CTR.btpMoreau });
    expect(res.body.data.contractor).toMatchObject({ phone: null, information: { fiscalNumber: '79845612300028' }, companyId: null });
  });

  it('answers NOT_FOUND for another organization\'s entry and an unknown id, never the entry', async () => {
    const foreign = await gql(t.url, architect, QUERY, { id: CTR.sudCharpentesVercors });
    expect(failure(foreign).extensions).toEqual({ code: 'NOT_FOUND' });
    expect(foreign.text).not.toContain('charpentes-vercors');
    expect(failure(await gql(t.url, architect, QUERY, { id: UNKNOWN })).extensions).toEqual({ code: 'NOT_FOUND' });
  });

  it('answers NOT_FOUND for an entry of another Administrator organization until the caller switches to it', async () => {
    const token = await tokenFor(t.url, 'architect@demo.test');
    expect(failure(await gql(t.url, token, QUERY, { id: CTR.nordCourantsLambert })).extensions.code).toBe('NOT_FOUND');
    await gql(t.url, token, `mutation { switchOrganization(organizationId: "${ORG.atelierNord}") { organization { id } } }`);
    try {
      const res = await gql(t.url, token, QUERY, { id: CTR.nordCourantsLambert });
      expect(res.body.data.contractor).toMatchObject({ id: CTR.nordCourantsLambert, name: 'Courants Faibles Lambert' });
    } finally {
      await gql(t.url, token, `mutation { switchOrganization(organizationId: "${ORG.atelierDemo}") { organization { id } } }`);
    }
  });

  it('answers BAD_USER_INPUT naming `id` when it is not a UUID', async () => {
    const res = await gql(t.url, architect, QUERY, { id: 'CTR-1' });
    expect(failure(res).extensions).toEqual({ code: 'BAD_USER_INPUT', errors: [{ field: 'id', message: 'must be a UUID' }] });
  });
});

describe('Query.creditsUsage', () => {
  const demo = { name: 'Atelier Demo' };
  const demoScope = { scopeId: ORG.atelierDemo, ...demo };
  const demoTotal = { organizationId: ORG.atelierDemo, ...demo };
  const usage = (variables: Record<string, unknown>, token = architect) => gql(t.url, token, CREDITS, variables);

  it('reports the current organization\'s consumption over the period, both days inclusive, equal to REST #35', async () => {
    const res = await usage({ from: '2021-04-01', to: '2021-04-30' });
    expect(res.body).toEqual(answered({ creditsUsage: {
      total: 2 + 4, from: '2021-04-01', to: '2021-04-30', scope: { type: 'organization', ...demoScope }, organizations: [{ ...demoTotal, total: 6 }],
    } }));
    const rest = await request(t.url, 'GET', '/api/v1/credits-usage?from=2021-04-01&to=2021-04-30', { token: architect });
    expect(asRest(res.body.data.creditsUsage)).toEqual(rest.body.credits_usage);
  });

  it('defaults to this month up to today (UTC), and counts the demo invitations', async () => {
    const today = formatDay(new Date());
    const res = await usage({});
    expect(res.body.data.creditsUsage).toMatchObject({ from: `${today.slice(0, 8)}01`, to: today, scope: { type: 'organization', ...demoScope } });
    const rest = await request(t.url, 'GET', '/api/v1/credits-usage', { token: architect });
    expect(asRest(res.body.data.creditsUsage)).toEqual(rest.body.credits_usage);
    const now = new Date();
    const from = formatDay(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 3, 1)));
    // Atelier Demo's 21 demo documents, one credit each.
    expect((await usage({ from, to: today })).body.data.creditsUsage.total).toBe(21);
  });

  it('reports another Administrator organization with organizationId, and a headquarter with headquarterId', async () => {
    const nord = await usage({ from: '2021-04-01', to: '2021-04-30', organizationId: ORG.atelierNord });
    expect(nord.body.data.creditsUsage).toEqual({
      total: 16, from: '2021-04-01', to: '2021-04-30', scope: { type: 'organization', scopeId: ORG.atelierNord, name: 'Atelier Nord' },
      organizations: [{ organizationId: ORG.atelierNord, name: 'Atelier Nord', total: 16 }],
    });
    const hq = await usage({ from: '2021-04-01', to: '2021-04-30', headquarterId: HQ });
    expect(hq.body.data.creditsUsage).toEqual({
      total: 22, from: '2021-04-01', to: '2021-04-30', scope: { type: 'headquarter', scopeId: HQ, name: 'Groupe Demo' },
      organizations: [{ ...demoTotal, total: 6 }, { organizationId: ORG.atelierNord, name: 'Atelier Nord', total: 16 }],
    });
  });

  it('answers FORBIDDEN for an organization or headquarter the caller may not report on, known or not, never its figures', async () => {
    for (const variables of [{ organizationId: ORG.cabinetSud }, { organizationId: UNKNOWN }, { headquarterId: UNKNOWN }]) {
      const res = await usage({ from: '2021-04-01', to: '2021-04-30', ...variables });
      expect(failure(res).extensions).toEqual({ code: 'FORBIDDEN' });
      expect(res.text).not.toContain('Cabinet Sud');
      expect(res.text).not.toContain('32');
    }
    expect(failure(await usage({ headquarterId: HQ }, other)).extensions.code).toBe('FORBIDDEN');
    // Cabinet Sud's own report counts only its credits.
    const theirs = await usage({ from: '2021-04-01', to: '2021-04-30' }, other);
    expect(theirs.body.data.creditsUsage.total).toBe(32);
  });

  it('answers BAD_USER_INPUT listing every failing argument', async () => {
    const dates = await usage({ from: '2021-04-31', to: '21-04-30', organizationId: 'nord' });
    expect(failure(dates).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      errors: expect.arrayContaining([
        { field: 'from', message: 'must be a date written YYYY-MM-DD' },
        { field: 'to', message: 'must be a date written YYYY-MM-DD' },
        { field: 'organizationId', message: 'must be a UUID' },
      ]),
    });
    expect((failure(dates).extensions.errors as unknown[])).toHaveLength(3);
    const order = await usage({ from: '2021-05-01', to: '2021-04-30', organizationId: ORG.atelierNord, headquarterId: HQ });
    expect(failure(order).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      errors: expect.arrayContaining([{ field: 'from', message: expect.any(String) }, { field: 'headquarterId', message: expect.any(String) }]),
    });
  });
});

describe('authentication of directory queries', () => {
  const QUERIES = [
    '{ tradeLists { id } }',
    `{ tradeList(id: "${LISTS.standard}") { id } }`,
    `{ contractor(id: "${CTR.batimentsDurand}") { id } }`,
    '{ creditsUsage { total } }',
  ];

  it('answers 401 UNAUTHENTICATED without a token and 403 FORBIDDEN to a plain member, before execution', async () => {
    const member = await tokenFor(t.url, 'member@demo.test');
    for (const query of QUERIES) {
      const anonymous = await gql(t.url, undefined, query);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }] });
      const forbidden = await gql(t.url, member, query);
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'FORBIDDEN' } }] });
    }
  });
});
