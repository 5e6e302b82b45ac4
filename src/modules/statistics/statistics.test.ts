import pg from 'pg';
import {
  Document, DocumentVersion, Intention, Project, ProjectTrade, Template, VersionStatus,
} from '../entities';
import type { Caller } from '../../platform/auth/caller';
import { StatisticsService, type ProjectStatisticsView, type TemplateStatsView } from './statistics.service';
import { DEMO_ARCHITECT_CALLER, DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';
import { oracleProjectStatistics, oracleTemplateStats } from '../../../test/support/statistics-oracle';
import { contractorOf, createProject as createTenderProject, fillProject, type MainTemplateSpec } from '../../../test/support/tender-builder';

const { ANSWERED, IN_REVISION, DECLINED, DRAFT } = VersionStatus;
const { YES, NO, MAYBE } = Intention;
const ORG = DEMO_IDS.organizations;
const P = '/api/svc/v1';

let t: TestApp;
let architect: string;
let other: string;

const ARCHITECT = DEMO_ARCHITECT_CALLER;
const OTHER: Caller = {
  userId: DEMO_IDS.users.other, email: 'other@demo.test', adminOrganizationIds: [ORG.cabinetSud],
  currentOrganizationId: ORG.cabinetSud, adminHeadquarterIds: [],
};

const service = (caller: Caller = ARCHITECT) => new StatisticsService({ em: t.orm.em.fork(), caller, config: t.config });

// ---------------------------------------------------------------------------------------------------------
// Building small projects (test/support/tender-builder.ts)
// ---------------------------------------------------------------------------------------------------------

const createProject = (name: string) => createTenderProject(t, architect, name);
const fill = (projectId: string, templates: MainTemplateSpec[]) => fillProject(t, projectId, templates);

const c = (n: number) => `stats-contractor-${n}@example.test`;

/**
 * Project A, worked out by hand below: a template with two slices (one of them empty), a selected
 * consultation that is not the lowest offer, a template without any offer, a selected consultation
 * without an offer, DRAFT latest versions, discounts, and contractors invited on two templates.
 */
const PROJECT_A: MainTemplateSpec[] = [
  {
    key: 'T1', trade: '01', budget: 10000, selected: 'D2',
    documents: [
      // Offer = latest ANSWERED version: 9500 - 200 = 9300 (the earlier 9000 does not count).
      { key: 'D1', contractor: c(1), intention: YES, dce: true, versions: [
        { status: ANSWERED, subTotal: 9000 }, { status: ANSWERED, subTotal: 9500, discount: 200 }] },
      // Offer 9800 - 300 = 9500, selected although D1 and D3 are lower.
      { key: 'D2', contractor: c(2), intention: null, dce: true, versions: [{ status: ANSWERED, subTotal: 9800, discount: 300 }] },
      // State IN_REVISION (latest version), offer 8000 (its earlier ANSWERED version), intention NO.
      { key: 'D3', contractor: c(3), intention: NO, versions: [
        { status: ANSWERED, subTotal: 8000 }, { status: IN_REVISION, subTotal: 8500 }] },
      // No version: PENDING.
      { key: 'D4', contractor: c(4), intention: MAYBE, dce: true },
    ],
    slices: [
      {
        key: 'S1', budget: 4000.5,
        documents: [
          // Contractor 1 again (also on T1); DRAFT latest counts as PENDING.
          { key: 'D5', contractor: c(1), intention: YES, dce: true, versions: [{ status: DRAFT, subTotal: 3900 }] },
          // Offer 4200 - 150.25 = 4049.75: the lowest (and only) offer of S1.
          { key: 'D6', contractor: c(5), intention: MAYBE, versions: [{ status: ANSWERED, subTotal: 4200, discount: 150.25 }] },
          { key: 'D7', contractor: c(6), intention: NO, dce: true, versions: [{ status: DECLINED, subTotal: 0 }] },
        ],
      },
      // No document at all.
      { key: 'S2', budget: 2000 },
    ],
  },
  {
    key: 'T2', trade: '02', budget: 5000,
    documents: [
      // DRAFT only: PENDING, no offer.
      { key: 'D8', contractor: c(2), intention: null, versions: [{ status: DRAFT, subTotal: 5100 }] },
      // IN_REVISION without any ANSWERED version: no offer.
      { key: 'D9', contractor: c(3), intention: MAYBE, dce: true, versions: [{ status: IN_REVISION, subTotal: 5200 }] },
    ],
  },
  {
    // The selected consultation (D10) has no offer: the lowest offer is retained instead.
    key: 'T3', trade: '03', budget: 3000, selected: 'D10',
    documents: [
      { key: 'D10', contractor: c(4), intention: NO, versions: [{ status: DECLINED, subTotal: 0 }] },
      { key: 'D11', contractor: c(5), intention: YES, dce: true, versions: [{ status: ANSWERED, subTotal: 3150 }] },
      // 3300 - 400 = 2900: the lowest.
      { key: 'D12', contractor: c(6), intention: YES, dce: true, versions: [{ status: ANSWERED, subTotal: 3300, discount: 400 }] },
    ],
  },
];

const stats = (s: Partial<TemplateStatsView>): TemplateStatsView => ({
  deltaBudget: 0, contractors: 0, contractorsAnswers: 0, contractorsPending: 0, contractorsDeclined: 0,
  contractorsInRevision: 0, contractorsIntentionIsNo: 0, contractorsIntentionIsMaybe: 0, ...s,
});

/** Per template of project A. */
const PROJECT_A_TEMPLATE_STATS: Record<string, TemplateStatsView> = {
  // D1, D2 ANSWERED; D3 IN_REVISION; D4 PENDING. Intentions: D3 NO, D4 MAYBE.
  // Retained: D2 selected, 9500; delta 9500 - 10000 = -500.
  T1: stats({ deltaBudget: -500, contractors: 4, contractorsAnswers: 2, contractorsPending: 1, contractorsInRevision: 1,
    contractorsIntentionIsNo: 1, contractorsIntentionIsMaybe: 1 }),
  // D5 PENDING (DRAFT), D6 ANSWERED, D7 DECLINED. Retained 4049.75; delta 4049.75 - 4000.50 = 49.25.
  S1: stats({ deltaBudget: 49.25, contractors: 3, contractorsAnswers: 1, contractorsPending: 1, contractorsDeclined: 1,
    contractorsIntentionIsNo: 1, contractorsIntentionIsMaybe: 1 }),
  // Nothing: no retained offer, delta 0.
  S2: stats({}),
  // D8 PENDING, D9 IN_REVISION; no offer: delta 0.
  T2: stats({ contractors: 2, contractorsPending: 1, contractorsInRevision: 1, contractorsIntentionIsMaybe: 1 }),
  // D10 DECLINED, D11 and D12 ANSWERED. Retained: lowest, 2900; delta 2900 - 3000 = -100.
  T3: stats({ deltaBudget: -100, contractors: 3, contractorsAnswers: 2, contractorsDeclined: 1, contractorsIntentionIsNo: 1 }),
};

/** Project A as a whole. */
const PROJECT_A_STATISTICS = {
  // D1, D2, D6, D11, D12.
  answered: 5,
  // PENDING or IN_REVISION, intention not NO: D4, D5, D8, D9 (D3 is IN_REVISION with intention NO).
  may_answer: 4,
  // D7, D10.
  declined: 2,
  // 12 documents over contractors 1-6, each invited on two templates.
  contractors: 6,
  // dce_downloaded_at set: D1, D2, D4, D5, D7, D9, D11, D12.
  tender_documents: 8,
  budgets: {
    // 10000 + 4000.50 + 2000 + 5000 + 3000
    total: 24000.5,
    // Retained offers: T1 9500 + S1 4049.75 + T3 2900; S2 and T2 keep their budgets 2000 + 5000.
    simulated_cost: 23449.75,
    // Budgets of T1, S1, T3: 10000 + 4000.50 + 3000
    total_anticipated_trades: 17000.5,
    // 9500 + 4049.75 + 2900
    total_anticipated_offers: 16449.75,
    // S2 + T2 = 7000; 7000 / 24000.50 x 100 = 29.166...
    budget_trades_to_assign: { value: 7000, percent: 29.17 },
    // 23449.75 - 24000.50 = -550.75; -550.75 / 24000.50 x 100 = -2.2947...
    project_deviation: { value: -550.75, percent: -2.29 },
  },
};

/** Demo project "Résidence Les Tilleuls", worked out by hand from src/seed/demo-data.ts. */
const RESIDENCE_STATISTICS = {
  // GO: Durand, Petit; Tranche 1: Durand; Charpente: Vercors, Durand; Électricité: Martin.
  answered: 6,
  // GO Moreau (IN_REVISION, MAYBE), GO Durand Rénovation (none), Tranche 2 Moreau (DRAFT) and Durand
  // Rénovation (none), Élec Services (DRAFT), Plomberie Lefèvre (IN_REVISION, YES); not Girard (NO).
  may_answer: 6,
  // Tranche 1 Petit, Charpente Durand Rénovation.
  declined: 2,
  // Durand, Petit, Moreau, Durand Rénovation, Vercors, Martin, Élec Services, Lefèvre, Girard.
  contractors: 9,
  tender_documents: 10,
  budgets: {
    // 120000 + 45000.50 + 38000 + 65000 + 48500 + 39000
    total: 355500.5,
    // 279799.50 + Tranche 2 38000 + Plomberie 39000
    simulated_cost: 356799.5,
    // GO 120000 + Tranche 1 45000.50 + Charpente 65000 + Électricité 48500
    total_anticipated_trades: 278500.5,
    // GO selected Petit 124800 + Tranche 1 43800 - 250.50 + Charpente lowest 61200 + Électricité 50250
    total_anticipated_offers: 279799.5,
    // 38000 + 39000; 77000 / 355500.50 x 100 = 21.659...
    budget_trades_to_assign: { value: 77000, percent: 21.66 },
    // 356799.50 - 355500.50; 1299 / 355500.50 x 100 = 0.365...
    project_deviation: { value: 1299, percent: 0.37 },
  },
};

const camel = (s: typeof RESIDENCE_STATISTICS): ProjectStatisticsView => ({
  answered: s.answered, mayAnswer: s.may_answer, declined: s.declined, contractors: s.contractors,
  tenderDocuments: s.tender_documents,
  budgets: {
    total: s.budgets.total, simulatedCost: s.budgets.simulated_cost, totalAnticipatedTrades: s.budgets.total_anticipated_trades,
    totalAnticipatedOffers: s.budgets.total_anticipated_offers, budgetTradesToAssign: s.budgets.budget_trades_to_assign,
    projectDeviation: s.budgets.project_deviation,
  },
});

let projectA: string;
let idsA: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
  projectA = await createProject('Statistiques A');
  idsA = await fill(projectA, PROJECT_A);
});
afterAll(() => t.close());

const statisticsOf = (projectId: string, token = architect, prefix = P) =>
  request(t.url, 'GET', `${prefix}/projects/${projectId}/statistics`, { token });

describe('GET /api/svc/v1/projects/{projectId}/statistics (#5)', () => {
  it('answers every counter and budget figure of a hand-built project', async () => {
    const res = await statisticsOf(projectA);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ project: { id: projectA, statistics: PROJECT_A_STATISTICS } });
  });

  it('answers the demo residence figures worked out from the seed', async () => {
    const res = await statisticsOf(DEMO_IDS.projects.residence);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ project: { id: DEMO_IDS.projects.residence, statistics: RESIDENCE_STATISTICS } });
  });

  it('answers the same body under the /svc/v1 alias', async () => {
    const [main, alias] = await Promise.all([statisticsOf(projectA), statisticsOf(projectA, architect, '/svc/v1')]);
    expect(alias.status).toBe(200);
    expect(alias.body).toEqual(main.body);
  });

  it('keeps the statistics of an archived project', async () => {
    // Demo "Maison individuelle Laurent", archived: one template of 85000 whose selected (and only) offer
    // is 83200, downloaded; deviation 83200 - 85000 = -1800, -1800 / 85000 x 100 = -2.1176...
    const res = await statisticsOf(DEMO_IDS.projects.archivedHouse);
    expect(res.status).toBe(200);
    expect(res.body.project.statistics).toEqual({
      answered: 1, may_answer: 0, declined: 0, contractors: 1, tender_documents: 1,
      budgets: {
        total: 85000, simulated_cost: 83200, total_anticipated_trades: 85000, total_anticipated_offers: 83200,
        budget_trades_to_assign: { value: 0, percent: 0 }, project_deviation: { value: -1800, percent: -2.12 },
      },
    });
  });

  it('gives the same statistics before and after archiving', async () => {
    const id = await createProject('Statistiques archivées');
    // One template of 1000 with one offer 1200 - 50 = 1150: deviation 150, 15 %.
    await fill(id, [{ key: 'X', trade: '05', budget: 1000, documents: [
      { key: 'X1', contractor: c(1), intention: YES, dce: true, versions: [{ status: ANSWERED, subTotal: 1200, discount: 50 }] }] }]);
    const expected = {
      answered: 1, may_answer: 0, declined: 0, contractors: 1, tender_documents: 1,
      budgets: {
        total: 1000, simulated_cost: 1150, total_anticipated_trades: 1000, total_anticipated_offers: 1150,
        budget_trades_to_assign: { value: 0, percent: 0 }, project_deviation: { value: 150, percent: 15 },
      },
    };
    expect((await statisticsOf(id)).body.project.statistics).toEqual(expected);
    expect((await request(t.url, 'PUT', `${P}/projects/${id}/archive`, { token: architect })).status).toBe(200);
    const res = await statisticsOf(id);
    expect(res.status).toBe(200);
    expect(res.body.project.statistics).toEqual(expected);
  });

  it('gives percents of 0 when the total budget is 0', async () => {
    const id = await createProject('Statistiques budget nul');
    // Two templates of budget 0: one with an offer of 1000 (deviation 1000), one without (to assign 0).
    await fill(id, [
      { key: 'Z1', trade: '01', budget: 0, documents: [
        { key: 'Z1a', contractor: c(2), intention: YES, versions: [{ status: ANSWERED, subTotal: 1000 }] }] },
      { key: 'Z2', trade: '02', budget: 0, documents: [{ key: 'Z2a', contractor: c(3), intention: NO }] },
    ]);
    const res = await statisticsOf(id);
    expect(res.status).toBe(200);
    expect(res.body.project.statistics).toEqual({
      answered: 1, may_answer: 0, declined: 0, contractors: 2, tender_documents: 0,
      budgets: {
        total: 0, simulated_cost: 1000, total_anticipated_trades: 0, total_anticipated_offers: 1000,
        budget_trades_to_assign: { value: 0, percent: 0 }, project_deviation: { value: 1000, percent: 0 },
      },
    });
  });

  it('gives zeros for a project without templates', async () => {
    const id = await createProject('Statistiques vides');
    const res = await statisticsOf(id);
    expect(res.status).toBe(200);
    expect(res.body.project.statistics).toEqual({
      answered: 0, may_answer: 0, declined: 0, contractors: 0, tender_documents: 0,
      budgets: {
        total: 0, simulated_cost: 0, total_anticipated_trades: 0, total_anticipated_offers: 0,
        budget_trades_to_assign: { value: 0, percent: 0 }, project_deviation: { value: 0, percent: 0 },
      },
    });
  });

  it('answers a project of another Administrator organization of the caller (Atelier Nord)', async () => {
    // 56000 budget; Martin 54000 - 750 = 53250 answered; Lambert declined (NO); Flandres pending (no
    // intention). Downloads: Martin, Lambert. Deviation -2750, -2750 / 56000 x 100 = -4.91.
    const res = await statisticsOf(DEMO_IDS.projects.nordOffices);
    expect(res.status).toBe(200);
    expect(res.body.project.statistics).toEqual({
      answered: 1, may_answer: 1, declined: 1, contractors: 3, tender_documents: 2,
      budgets: {
        total: 56000, simulated_cost: 53250, total_anticipated_trades: 56000, total_anticipated_offers: 53250,
        budget_trades_to_assign: { value: 0, percent: 0 }, project_deviation: { value: -2750, percent: -4.91 },
      },
    });
  });

  it('answers 404 for a project of an organization where the caller is not Administrator, never its data', async () => {
    const res = await statisticsOf(DEMO_IDS.projects.cabinetSudHall);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Project not found' });
    // Its own Administrator sees it: 150000 budget, one offer 147000 - 2000 = 145000.
    const own = await statisticsOf(DEMO_IDS.projects.cabinetSudHall, other);
    expect(own.status).toBe(200);
    expect(own.body.project.statistics.budgets.total_anticipated_offers).toBe(145000);
    // And Cabinet Sud's Administrator does not see Atelier Demo's.
    expect((await statisticsOf(projectA, other)).status).toBe(404);
  });

  it('answers 404 for an unknown project', async () => {
    const res = await statisticsOf('6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'Project not found' });
  });

  it('answers 400 for a projectId that is not a UUID', async () => {
    const res = await statisticsOf('not-a-uuid');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'projectId', message: 'must be a UUID' }] });
  });

  it('answers 401 without a token, on both paths', async () => {
    for (const prefix of [P, '/svc/v1']) {
      const res = await request(t.url, 'GET', `${prefix}/projects/${projectA}/statistics`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 401, message: expect.any(String) });
    }
  });

  it('is described in the OpenAPI document with its success body', async () => {
    const res = await request(t.url, 'GET', `${P}/openapi.json`);
    // One operation for both prefixes: keyed by the interface's P form, the alias named on it.
    const item = res.body.paths['/api/svc/v1/projects/{projectId}/statistics'];
    expect(item['x-also-served-at']).toBe('/svc/v1/projects/{projectId}/statistics');
    expect(res.body.paths['/svc/v1/projects/{projectId}/statistics']).toBeUndefined();
    const schema = item.get.responses['200'].content['application/json'].schema;
    const component = (ref: { $ref: string }) => res.body.components.schemas[ref.$ref.split('/').pop()!];
    const statistics = component(schema.properties.project.properties.statistics);
    expect(Object.keys(component(statistics.properties.budgets).properties).sort()).toEqual([
      'budget_trades_to_assign', 'project_deviation', 'simulated_cost', 'total', 'total_anticipated_offers', 'total_anticipated_trades',
    ]);
  });
});

describe('StatisticsService.templateStats', () => {
  it('computes the stats of each template and slice of a hand-built project', async () => {
    const keys = Object.keys(PROJECT_A_TEMPLATE_STATS);
    const map = await service().templateStats(keys.map((k) => idsA[k]));
    expect(map.size).toBe(keys.length);
    for (const k of keys) expect([k, map.get(idsA[k])]).toEqual([k, PROJECT_A_TEMPLATE_STATS[k]]);
  });

  it('computes the demo residence templates from the seed', async () => {
    const T = DEMO_IDS.templates;
    const map = await service().templateStats([T.residenceGrosOeuvre, T.residenceGrosOeuvreTranche1, T.residenceGrosOeuvreTranche2, T.residenceCharpente]);
    // GO: selected Petit 124800 - 120000 = 4800; Durand, Petit answered, Moreau in revision (MAYBE), Durand Rénovation pending.
    expect(map.get(T.residenceGrosOeuvre)).toEqual(stats({ deltaBudget: 4800, contractors: 4, contractorsAnswers: 2,
      contractorsPending: 1, contractorsInRevision: 1, contractorsIntentionIsMaybe: 1 }));
    // Tranche 1: 43800 - 250.50 - 45000.50 = -1451.
    expect(map.get(T.residenceGrosOeuvreTranche1)).toEqual(stats({ deltaBudget: -1451, contractors: 2, contractorsAnswers: 1,
      contractorsDeclined: 1, contractorsIntentionIsNo: 1 }));
    // Tranche 2: a DRAFT and nothing: two pending, no offer.
    expect(map.get(T.residenceGrosOeuvreTranche2)).toEqual(stats({ contractors: 2, contractorsPending: 2, contractorsIntentionIsMaybe: 1 }));
    // Charpente: lowest 61200 - 65000 = -3800.
    expect(map.get(T.residenceCharpente)).toEqual(stats({ deltaBudget: -3800, contractors: 3, contractorsAnswers: 2,
      contractorsDeclined: 1, contractorsIntentionIsNo: 1 }));
  });

  it('leaves out templates the caller may not see, unknown ids and malformed ids', async () => {
    const map = await service().templateStats([
      DEMO_IDS.templates.cabinetSudCharpente, '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b', 'nope', idsA.T2,
    ]);
    expect([...map.keys()]).toEqual([idsA.T2]);
    expect((await service(OTHER).templateStats([idsA.T1])).size).toBe(0);
  });

  it('answers an empty map for no ids without querying', async () => {
    const m = await t.queries.measure(() => service().templateStats([]));
    expect(m.result.size).toBe(0);
    expect(m.statements).toBe(0);
  });
});

describe('StatisticsService.projectStatistics', () => {
  /** Projects whose only template (budget 1000) has an offer of 900 and a pending invitation. */
  const bulk: string[] = [];
  const bulkTemplates: string[] = [];
  // Offer 900 of 1000: answered 1, may_answer 1 (the pending one, no intention), contractors 2,
  // downloads 1; deviation -100, -100 / 1000 x 100 = -10.
  const BULK_STATS: ProjectStatisticsView = {
    answered: 1, mayAnswer: 1, declined: 0, contractors: 2, tenderDocuments: 1,
    budgets: {
      total: 1000, simulatedCost: 900, totalAnticipatedTrades: 1000, totalAnticipatedOffers: 900,
      budgetTradesToAssign: { value: 0, percent: 0 }, projectDeviation: { value: -100, percent: -10 },
    },
  };

  beforeAll(async () => {
    const em = t.orm.em.fork();
    const a = await contractorOf(em, c(7));
    const b = await contractorOf(em, c(8));
    for (let i = 0; i < 40; i++) {
      const project = em.create(Project, {
        organization: i % 2 ? ORG.atelierNord : ORG.atelierDemo, name: `Bulk ${i}`, constructionType: 'office',
        tradeList: DEMO_IDS.tradeLists.standard, responseType: 'DPGF',
      });
      const trade = em.create(ProjectTrade, { project, number: '01', name: 'Gros œuvre', shortName: 'GO' });
      const template = em.create(Template, { project, trade, budget: 1000 });
      // Atelier Nord projects use Atelier Demo's directory here: statistics do not look at directories.
      const answered = em.create(Document, { template, contractor: a, intention: YES, dceDownloadedAt: new Date() });
      em.create(DocumentVersion, { document: answered, version: 1, status: ANSWERED, subTotal: 950, discount: 50 });
      em.create(Document, { template, contractor: b, intention: null });
      bulk.push(project.id);
      bulkTemplates.push(template.id);
    }
    await em.flush();
  });

  it('answers many projects at once, leaving out those the caller may not see', async () => {
    const P_ = DEMO_IDS.projects;
    const map = await service().projectStatistics([P_.residence, P_.school, P_.archivedHouse, P_.nordOffices, P_.cabinetSudHall, projectA]);
    expect([...map.keys()].sort()).toEqual([P_.residence, P_.school, P_.archivedHouse, P_.nordOffices, projectA].sort());
    expect(map.get(P_.residence)).toEqual(camel(RESIDENCE_STATISTICS));
    expect(map.get(projectA)).toEqual(camel(PROJECT_A_STATISTICS));
    // School: Démolition 28000, lowest of 26500 - 500 and 29000 = 26000; Menuiseries 42000 without offer.
    // may_answer: Bernard (IN_REVISION, MAYBE) and Durand Rénovation (pending, YES); Durand declined (NO).
    // Simulated 26000 + 42000 = 68000; deviation -2000 / 70000 = -2.857 %; to assign 42000 / 70000 = 60 %.
    expect(map.get(P_.school)).toEqual(camel({
      answered: 2, may_answer: 2, declined: 1, contractors: 5, tender_documents: 4,
      budgets: {
        total: 70000, simulated_cost: 68000, total_anticipated_trades: 28000, total_anticipated_offers: 26000,
        budget_trades_to_assign: { value: 42000, percent: 60 }, project_deviation: { value: -2000, percent: -2.86 },
      },
    }));
    expect((await service(OTHER).projectStatistics([P_.residence, P_.cabinetSudHall])).size).toBe(1);
  });

  it('runs one SQL statement whatever the number of projects', async () => {
    const one = await t.queries.measure(() => service().projectStatistics(bulk.slice(0, 1)));
    const forty = await t.queries.measure(() => service().projectStatistics(bulk));
    expect(one.statements).toBe(1);
    expect(forty.statements).toBe(1);
    expect(forty.result.size).toBe(40);
    for (const id of bulk) expect(forty.result.get(id)).toEqual(BULK_STATS);
  });

  it('runs one SQL statement for the stats of any number of templates', async () => {
    const one = await t.queries.measure(() => service().templateStats(bulkTemplates.slice(0, 1)));
    const forty = await t.queries.measure(() => service().templateStats(bulkTemplates));
    expect(one.statements).toBe(1);
    expect(forty.statements).toBe(1);
    expect(forty.result.size).toBe(40);
    for (const id of bulkTemplates) {
      expect(forty.result.get(id)).toEqual(stats({ deltaBudget: -100, contractors: 2, contractorsAnswers: 1, contractorsPending: 1 }));
    }
  });
});

describe('statistics kept at write time (Migration20261220000000_statistics)', () => {
  /** Two sessions of their own, each in a transaction, writing what other parts of the platform write. */
  async function sessions(): Promise<[pg.Client, pg.Client]> {
    const a = new pg.Client({ connectionString: t.databaseUrl });
    const b = new pg.Client({ connectionString: t.databaseUrl });
    await Promise.all([a.connect(), b.connect()]);
    return [a, b];
  }
  const answer = (client: pg.Client, documentId: string, subTotal: number) => client.query(`
    insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount)
    select gen_random_uuid(), now(), now(), $1, coalesce(max(version), 0) + 1, 'ANSWERED', $2, 0 from document_version where document_id = $1`,
  [documentId, subTotal]);
  const pidOf = async (client: pg.Client) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
  /** The session `pid` waits for a lock another one holds. */
  async function waitsForLock(pid: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const rows = await t.orm.em.fork().getConnection().execute<Array<{ wait_event_type: string | null }>>(
        'select wait_event_type from pg_stat_activity where pid = ?', [pid]);
      if (rows[0]?.wait_event_type === 'Lock') return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the second writer never waited');
  }

  it('count the writes of concurrent transactions on documents of one template, none lost', async () => {
    const id = await createProject('Statistiques concurrentes');
    const ids = await fill(id, [{ key: 'C', trade: '01', budget: 10000, documents: [
      { key: 'C1', contractor: c(1), intention: YES }, { key: 'C2', contractor: c(2), intention: YES }] }]);
    const [first, second] = await sessions();
    try {
      const secondPid = await pidOf(second);
      await first.query('begin');
      await second.query('begin');
      await answer(first, ids.C1, 9000);
      // The second writer's statement waits for the first's template row, then counts from what it committed.
      const late = answer(second, ids.C2, 8000);
      await waitsForLock(secondPid);
      await first.query('commit');
      await late;
      await second.query('commit');
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
    const map = await service().templateStats([ids.C]);
    expect(map.get(ids.C)).toEqual(stats({ deltaBudget: -2000, contractors: 2, contractorsAnswers: 2 }));
    expect(map).toEqual(await oracleTemplateStats(t.orm.em.fork(), [ids.C], ARCHITECT.adminOrganizationIds));
    expect(await service().projectStatistics([id])).toEqual(await oracleProjectStatistics(t.orm.em.fork(), [id], ARCHITECT.adminOrganizationIds));
  });

  it('leave nothing of a rolled-back write', async () => {
    const id = await createProject('Statistiques annulées');
    const ids = await fill(id, [{ key: 'R', trade: '01', budget: 5000, documents: [{ key: 'R1', contractor: c(1), intention: YES }] }]);
    const before = await service().projectStatistics([id]);
    const [client, other] = await sessions();
    try {
      await client.query('begin');
      await answer(client, ids.R1, 4000);
      await client.query('rollback');
    } finally {
      await Promise.all([client.end(), other.end()]);
    }
    expect(await service().projectStatistics([id])).toEqual(before);
    expect((await service().templateStats([ids.R])).get(ids.R)).toEqual(stats({ contractors: 1, contractorsPending: 1 }));
  });

  it('are rebuilt from the histories after a TRUNCATE, which fires no row trigger', async () => {
    const em = t.orm.em.fork();
    const before = await service().projectStatistics([DEMO_IDS.projects.residence]);
    await em.transactional(async (tx) => {
      await tx.execute('truncate document_version cascade');
      const after = await new StatisticsService({ em: tx, caller: ARCHITECT, config: t.config }).projectStatistics([DEMO_IDS.projects.residence]);
      expect(after.get(DEMO_IDS.projects.residence)).toMatchObject({ answered: 0, budgets: { totalAnticipatedOffers: 0 } });
      expect(after).toEqual(await oracleProjectStatistics(tx, [DEMO_IDS.projects.residence], ARCHITECT.adminOrganizationIds));
      throw new Undo();
    }).catch((err) => { if (!(err instanceof Undo)) throw err; });
    expect(await service().projectStatistics([DEMO_IDS.projects.residence])).toEqual(before);
  });
});

class Undo extends Error {}
