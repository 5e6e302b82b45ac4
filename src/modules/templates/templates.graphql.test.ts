import { toRest } from '../../platform/rest/serialize';
import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { gql } from '../../../test/support/graphql';
import { request } from '../../../test/support/http';

let t: TestApp;
let architect: string;

const P = '/api/svc/v1';
const { projects: PRJ, templates: TPL, documents: DOC, contractors: CTR, projectTrades: TRD } = DEMO_IDS;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const STATS = `stats { deltaBudget contractors contractorsAnswers contractorsPending contractorsDeclined contractorsInRevision
  contractorsIntentionIsNo contractorsIntentionIsMaybe }`;
/** Every field of the template record (interface.md), in camelCase. */
const TEMPLATE = `id projectId isSlice slice closedAt versionSaved responseType budgets { value }
  itemisedSheet { version isDraft hasAdditionalServices } trade { id name number shortName } endOfOfferDate
  consultationStartedAt foldOpened favouriteConsultationId selectedConsultationId createdAt updatedAt ${STATS}`;
const DOCUMENT = `id intention state dceDownloadedAt contractor { id name email information { fiscalNumber } }
  versions { version subTotal discount status sentAt isMandate hasFiles hasDpgf }`;

/** Names only Cabinet Sud's records carry: none may appear in an answer to architect@demo.test. */
const CABINET_SUD_NAMES = ['Cabinet Sud', 'Halle de marché', 'Carpentras', 'Charpente métallique'];

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

const templatesOf = async (projectId: string, fields = TEMPLATE) => {
  const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) { templates { ${fields} } } }`, { id: projectId });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.project.templates as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
};

describe('Project.templates', () => {
  it('lists the templates and slices of the project, oldest first, with the template record\'s fields in camelCase', async () => {
    const templates = await templatesOf(PRJ.residence);
    expect(templates.map((x) => x.id)).toEqual([
      TPL.residenceGrosOeuvre, TPL.residenceGrosOeuvreTranche1, TPL.residenceGrosOeuvreTranche2, TPL.residenceCharpente,
      TPL.residenceElectricite, TPL.residencePlomberie,
    ]);
    expect(templates[0]).toEqual({
      id: TPL.residenceGrosOeuvre,
      projectId: PRJ.residence,
      isSlice: false,
      slice: null,
      closedAt: null,
      versionSaved: 3,
      responseType: 'DPGF',
      budgets: { value: 120000 },
      itemisedSheet: { version: 1, isDraft: false, hasAdditionalServices: false },
      trade: { id: TRD.residence['01'], name: 'Gros œuvre', number: '01', shortName: 'GO' },
      endOfOfferDate: '2027-01-29T12:00:00.000000Z',
      consultationStartedAt: '2026-09-14T08:00:00.000000Z',
      foldOpened: false,
      favouriteConsultationId: DOC.residenceGoDurand,
      selectedConsultationId: DOC.residenceGoPetit,
      // Selected offer 124800 (Petit) - budget 120000.
      stats: {
        deltaBudget: 4800, contractors: 4, contractorsAnswers: 2, contractorsPending: 1, contractorsDeclined: 0,
        contractorsInRevision: 1, contractorsIntentionIsNo: 0, contractorsIntentionIsMaybe: 1,
      },
      createdAt: '2026-09-10T09:00:00.000000Z',
      updatedAt: '2026-09-10T09:00:00.000000Z',
    });
  });

  it('gives a slice isSlice, its name in `slice`, and its own budget and stats', async () => {
    const templates = await templatesOf(PRJ.residence);
    const tranche1 = templates.find((x) => x.id === TPL.residenceGrosOeuvreTranche1)!;
    expect(tranche1).toMatchObject({
      isSlice: true, slice: 'Tranche 1', budgets: { value: 45000.5 }, trade: { id: TRD.residence['01'] },
      favouriteConsultationId: null, selectedConsultationId: null,
      // Lowest offer 43800 - 250.5 = 43549.5, budget 45000.5.
      stats: {
        deltaBudget: -1451, contractors: 2, contractorsAnswers: 1, contractorsPending: 0, contractorsDeclined: 1,
        contractorsInRevision: 0, contractorsIntentionIsNo: 1, contractorsIntentionIsMaybe: 0,
      },
    });
    const plomberie = templates.find((x) => x.id === TPL.residencePlomberie)!;
    expect(plomberie.stats).toMatchObject({ deltaBudget: 0, contractors: 2, contractorsInRevision: 1, contractorsPending: 1, contractorsIntentionIsNo: 1 });
  });

  it('lists a main template\'s slices in `slices`, and none for a slice or a template without slices', async () => {
    const templates = await templatesOf(PRJ.residence, 'id slices { id isSlice slice }');
    const byId = new Map(templates.map((x) => [x.id, x.slices]));
    expect(byId.get(TPL.residenceGrosOeuvre)).toEqual([
      { id: TPL.residenceGrosOeuvreTranche1, isSlice: true, slice: 'Tranche 1' },
      { id: TPL.residenceGrosOeuvreTranche2, isSlice: true, slice: 'Tranche 2' },
    ]);
    expect(byId.get(TPL.residenceGrosOeuvreTranche1)).toEqual([]);
    expect(byId.get(TPL.residenceCharpente)).toEqual([]);
  });

  it('lists the templates of an archived project with closedAt, and none for a project without templates', async () => {
    const archived = await templatesOf(PRJ.archivedHouse, 'id closedAt');
    expect(archived).toEqual([{ id: TPL.archivedHouseGrosOeuvre, closedAt: '2026-05-04T12:00:00.000000Z' }]);
    const created = await request(t.url, 'POST', `${P}/projects`, { token: architect, body: {
      name: 'Sans lots', construction_type: 'office', managers: [{ id: DEMO_IDS.users.architect }], trade_list_id: DEMO_IDS.tradeLists.standard, response_type: 'DPGF',
    } });
    expect(created.status).toBe(201);
    expect(await templatesOf(created.body.project.id)).toEqual([]);
  });

  it('equals REST #10 (fields and stats) for every template of every demo project of the caller', async () => {
    let compared = 0;
    for (const projectId of [PRJ.residence, PRJ.school, PRJ.archivedHouse, PRJ.nordOffices]) {
      const rest = await request(t.url, 'GET', `${P}/projects/${projectId}/templates`, { token: architect });
      expect(rest.status).toBe(200);
      const graphql = await templatesOf(projectId);
      expect(graphql.length).toBeGreaterThan(0);
      expect(toRest(graphql)).toEqual(rest.body.templates);
      compared += graphql.length;
    }
    expect(compared).toBe(10);
  });

  it('never shows another organization\'s templates: NOT_FOUND for its project, absent from every listed project', async () => {
    const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) { templates { id documents { id } } } }`, { id: PRJ.cabinetSudHall });
    expect(res.body.data).toBeNull();
    expect(res.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const all = await gql(t.url, architect, `{ projects { nodes { templates { id trade { name } documents { id contractor { id } } } } } }`);
    const ids = all.body.data.projects.nodes.flatMap((p: { templates: Array<{ id: string }> }) => p.templates.map((x) => x.id));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).not.toContain(TPL.cabinetSudCharpente);
    expect(all.text).not.toContain(DOC.sudCharpenteVercors);
    expect(all.text).not.toContain(CTR.sudCharpentesVercors);
    for (const name of CABINET_SUD_NAMES) expect(all.text).not.toContain(name);
  });
});

describe('Template.trade', () => {
  it('is the project\'s trade, the same ProjectTrade record as in Project.trades, every field equal', async () => {
    const TRADE = 'id projectId number name shortName comment createdAt updatedAt';
    const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) { trades { ${TRADE} } templates { id trade { ${TRADE} } } } }`, { id: PRJ.residence });
    const { trades, templates } = res.body.data.project;
    expect(templates).toHaveLength(6);
    for (const template of templates) expect(trades).toContainEqual(template.trade);
    expect(templates[0].trade).toEqual(trades[0]);
  });

  it('runs no more statements with the templates\' trades than without them when Project.trades is asked too', async () => {
    const query = (trade: string) => `{ projects { nodes { trades { id } templates { id ${trade} } } } }`;
    const without = await t.queries.measure(() => gql(t.url, architect, query('')));
    const withTrades = await t.queries.measure(() => gql(t.url, architect, query('trade { id name }')));
    expect(withTrades.result.body.errors).toBeUndefined();
    expect(withTrades.statements).toBe(without.statements);
  });
});

describe('Template.stats and DocumentVersion ids', () => {
  it('keys a template\'s stats by "<templateId>:stats" and each version by its own id', async () => {
    const templates = await templatesOf(PRJ.residence, 'id stats { id templateId contractors } documents { id versions { id version } }');
    const versionIds = new Set<string>();
    for (const template of templates) {
      expect(template.stats).toMatchObject({ id: `${template.id}:stats`, templateId: template.id });
      for (const d of template.documents) for (const v of d.versions) versionIds.add(v.id);
    }
    const rows = await t.orm.em.fork().getConnection().execute<Array<{ id: string }>>(`select v.id from document_version v join document d on d.id = v.document_id
      join template x on x.id = d.template_id where x.project_id = ?`, [PRJ.residence]);
    expect(rows.length).toBeGreaterThan(5);
    expect(versionIds).toEqual(new Set(rows.map((r) => r.id)));
  });
});

describe('Template.documents and Document', () => {
  it('gives each invited contractor\'s document with its contractor, intention, state, download time and versions', async () => {
    const [main] = await templatesOf(PRJ.residence, `id documents { ${DOCUMENT} }`);
    expect(main.documents.map((d: { id: string }) => d.id)).toEqual([
      DOC.residenceGoDurand, DOC.residenceGoPetit, DOC.residenceGoMoreau, DOC.residenceGoDurandRenovation,
    ]);
    const [durand, petit, moreau, renovation] = main.documents;
    expect(durand).toEqual({
      id: DOC.residenceGoDurand,
      intention: 'YES',
      state: 'ANSWERED',
      dceDownloadedAt: '2026-09-15T10:12:00.000000Z',
      contractor: { id: CTR.batimentsDurand, name: 'Bâtiments Durand SAS', email: 'p.durand@batiments-durand.fr', information: { fiscalNumber: '73282932000074' } },
      versions: [
        { version: 1, subTotal: 118000, discount: 1500, status: 'ANSWERED', sentAt: '2026-10-06T16:20:00.000000Z', isMandate: false, hasFiles: true, hasDpgf: true },
        { version: 2, subTotal: 116500, discount: 1000, status: 'ANSWERED', sentAt: '2026-10-27T11:05:00.000000Z', isMandate: false, hasFiles: true, hasDpgf: true },
      ],
    });
    // isMandate is a real Boolean in GraphQL (REST gives the word as a string).
    expect(petit.versions).toEqual([
      { version: 1, subTotal: 124800, discount: 0, status: 'ANSWERED', sentAt: '2026-10-09T14:30:00.000000Z', isMandate: true, hasFiles: true, hasDpgf: true },
    ]);
    expect(moreau).toMatchObject({ intention: 'MAYBE', state: 'IN_REVISION' });
    expect(moreau.versions.map((v: { status: string }) => v.status)).toEqual(['ANSWERED', 'IN_REVISION']);
    expect(renovation).toMatchObject({ intention: null, state: 'PENDING', dceDownloadedAt: null, versions: [] });
  });

  it('reads a document\'s state and a version\'s files only when the operation selects them, the other fields alike', async () => {
    const query = (document: string, version: string) => `query($id: ID!) { project(id: $id) { templates { id documents { id intention ${document}
      versions { version status ${version} } } } } }`;
    const ask = (q: string) => t.queries.measure(() => gql(t.url, architect, q, { id: PRJ.residence }));
    await ask('{ me { id } }'); // the first request of a process reads the signing keys
    const plain = await ask(query('', ''));
    const full = await ask(query('state', 'hasFiles'));
    const inFragments = await ask(`${query('...State', '...Files')} fragment State on Document { state } fragment Files on DocumentVersion { hasFiles }`);
    // The documents' statement (the level's own or the one read ahead with the templates) reading versions too.
    const readsLatestVersion = (sql: string[]) => sql.some((q) => /^\s*select d\.id, d\.template_id\b/.test(q) && /document_version/.test(q));
    const readsFiles = (sql: string[]) => sql.some((q) => /document_file/.test(q));
    expect([readsLatestVersion(plain.sql), readsFiles(plain.sql)]).toEqual([false, false]);
    expect([readsLatestVersion(full.sql), readsFiles(full.sql)]).toEqual([true, true]);
    expect([readsLatestVersion(inFragments.sql), readsFiles(inFragments.sql)]).toEqual([true, true]);
    expect(plain.statements).toBe(full.statements);
    type Answer = Array<{ id: string; documents: Array<{ state?: string; versions: Array<{ hasFiles?: boolean }> }> }>;
    const templates: Answer = full.result.body.data.project.templates;
    expect(templates.flatMap((x) => x.documents.map((d) => d.state))).toEqual(expect.arrayContaining(['ANSWERED', 'IN_REVISION', 'PENDING']));
    expect(templates.flatMap((x) => x.documents.flatMap((d) => d.versions.map((v) => v.hasFiles)))).toEqual(expect.arrayContaining([true, false]));
    expect(inFragments.result.body.data).toEqual(full.result.body.data);
    const stripped = templates.map((x) => ({ ...x, documents: x.documents.map(({ state: _s, ...d }) => ({ ...d, versions: d.versions.map(({ hasFiles: _f, ...v }) => v) })) }));
    expect(plain.result.body.data.project.templates).toEqual(stripped);
  });

  it('counts a draft latest version as PENDING, with a null sentAt, and tells files from DPGF files', async () => {
    const templates = await templatesOf(PRJ.residence, `id documents { ${DOCUMENT} }`);
    const tranche2 = templates.find((x) => x.id === TPL.residenceGrosOeuvreTranche2)!;
    expect(tranche2.documents[0]).toMatchObject({
      id: DOC.residenceTranche2Moreau, state: 'PENDING',
      versions: [{ version: 1, subTotal: 36200, discount: 0, status: 'DRAFT', sentAt: null, isMandate: false, hasFiles: false, hasDpgf: false }],
    });
    const tranche1 = templates.find((x) => x.id === TPL.residenceGrosOeuvreTranche1)!;
    expect(tranche1.documents.map((d: { state: string; intention: string }) => [d.state, d.intention])).toEqual([['ANSWERED', 'YES'], ['DECLINED', 'NO']]);
    const charpente = templates.find((x) => x.id === TPL.residenceCharpente)!;
    const durand = charpente.documents.find((d: { id: string }) => d.id === DOC.residenceCharpenteDurand);
    expect(durand.versions[0]).toMatchObject({ hasFiles: false, hasDpgf: false });
  });

  it('equals REST #13 for every template of the caller\'s demo projects, isMandate as a Boolean', async () => {
    let documents = 0;
    for (const projectId of [PRJ.residence, PRJ.school, PRJ.archivedHouse, PRJ.nordOffices]) {
      for (const template of await templatesOf(projectId, `id documents { ${DOCUMENT} }`)) {
        const rest = await request(t.url, 'GET', `${P}/projects/${projectId}/templates/${template.id}`, { token: architect });
        expect(rest.status).toBe(200);
        for (const d of template.documents) {
          for (const v of d.versions) expect(typeof v.isMandate).toBe('boolean');
        }
        const asRest = (toRest(template.documents) as Array<{ versions: Array<{ is_mandate: boolean }> }>)
          .map((d) => ({ ...d, versions: d.versions.map((v) => ({ ...v, is_mandate: String(v.is_mandate) })) }));
        expect(asRest).toEqual(rest.body.template.documents);
        documents += template.documents.length;
      }
    }
    expect(documents).toBe(24);
  });

  it('gives timestamps with microseconds', async () => {
    const [main] = await templatesOf(PRJ.residence, `id createdAt documents { dceDownloadedAt versions { sentAt } }`);
    expect(main.createdAt).toMatch(TIMESTAMP);
    expect(main.documents[0].dceDownloadedAt).toMatch(TIMESTAMP);
    expect(main.documents[0].versions[0].sentAt).toMatch(TIMESTAMP);
  });
});

describe('Project.trades', () => {
  it('lists the project\'s trades by number with their fields in camelCase, equal to REST #6', async () => {
    const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) { trades { id projectId number name shortName comment createdAt updatedAt } } }`, { id: PRJ.residence });
    const { trades } = res.body.data.project;
    expect(trades.map((x: { number: string }) => x.number)).toEqual(['01', '02', '03', '04', '05', '06', '07', '08']);
    expect(trades[0]).toEqual({
      id: TRD.residence['01'], projectId: PRJ.residence, number: '01', name: 'Gros œuvre', shortName: 'GO', comment: null,
      createdAt: '2026-06-02T08:30:00.000000Z', updatedAt: '2026-06-02T08:30:00.000000Z',
    });
    const rest = await request(t.url, 'GET', `${P}/projects/${PRJ.residence}/trades`, { token: architect });
    expect(toRest(trades)).toEqual(rest.body.trades);
  });

  it('gives each listed project its own trades', async () => {
    const res = await gql(t.url, architect, `{ projects { nodes { id trades { id projectId } } } }`);
    for (const project of res.body.data.projects.nodes) {
      expect(project.trades.length).toBeGreaterThan(0);
      expect(project.trades.every((x: { projectId: string }) => x.projectId === project.id)).toBe(true);
    }
    const school = res.body.data.projects.nodes.find((p: { id: string }) => p.id === PRJ.school);
    expect(school.trades.map((x: { id: string }) => x.id)).toEqual(Object.values(TRD.school));
  });

  it('answers NOT_FOUND for another organization\'s project, never its trades', async () => {
    const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) { trades { id name } } }`, { id: PRJ.cabinetSudHall });
    expect(res.body.data).toBeNull();
    expect(res.body.errors[0].extensions.code).toBe('NOT_FOUND');
    for (const name of CABINET_SUD_NAMES) expect(res.text).not.toContain(name);
    expect(res.text).not.toContain(TRD.cabinetSudHall['01']);
  });
});
