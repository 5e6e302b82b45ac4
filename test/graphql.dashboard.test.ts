import { execute, parse, print, type OperationDefinitionNode } from 'graphql';
import { DashboardDocument } from '../examples/graphql/generated/graphql';
import { createContext } from '../src/modules/context';
import { createLoaders } from '../src/modules/loaders';
import { OperationSelection } from '../src/platform/graphql/selection';
import { graphqlSchema } from '../src/modules/schema';
import { toRest } from '../src/platform/rest/serialize';
import { loadCaller } from '../src/platform/auth/caller.service';
import type { VerifiedToken } from '../src/platform/auth/token-verifier';
import type { Caller } from '../src/platform/auth/caller';
import { DocumentService, VERSION_FIELDS } from '../src/modules/documents/document.service';
import { DEMO_ARCHITECT_CALLER, DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request } from './support/http';

let t: TestApp;
let architect: string;

/** Projects the dashboard lists: enough that a statement per record would show at once. */
const PROJECTS = 50;

const STATISTICS = `answered mayAnswer declined contractors tenderDocuments budgets { total simulatedCost totalAnticipatedTrades
  totalAnticipatedOffers budgetTradesToAssign { value percent } projectDeviation { value percent } }`;
const TEMPLATE_STATS = `deltaBudget contractors contractorsAnswers contractorsPending contractorsDeclined contractorsInRevision
  contractorsIntentionIsNo contractorsIntentionIsMaybe`;
/** The front end's dashboard: every project with its statistics, templates, documents, versions and contractors. */
const DASHBOARD = `query($first: Int) { projects(first: $first) { totalCount nodes { id name
  statistics { id ${STATISTICS} }
  templates { id trade { id name } stats { id ${TEMPLATE_STATS} } documents { id state contractor { id name } versions { id version status } } }
  trades { id } managers { id } organization { id } } } }`;

interface DashboardProject {
  id: string;
  name: string;
  statistics: { id: string; contractors: number; answered: number; budgets: { total: number } };
  templates: Array<{ id: string; trade: { id: string; name: string }; stats: Record<string, number>; documents: Array<{ id: string; state: string; contractor: { id: string; name: string }; versions: Array<{ id: string; version: number; status: string }> }> }>;
  trades: Array<{ id: string }>;
  managers: Array<{ id: string }>;
  organization: { id: string };
}

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return t.orm.em.fork().getConnection().execute<T[]>(query, params);
}

async function ok(query: string, variables: Record<string, unknown>): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await gql(t.url, architect, query, variables);
  if (res.status !== 200 || res.body.errors) throw new Error(`${query.slice(0, 40)}: ${res.status} ${res.text}`);
  return res.body.data;
}

/**
 * A dashboard project, built through the mutations the front end uses: a main template and a slice of
 * trade 01 with three invited contractors (own emails, so every project has its own directory entries),
 * and an empty template of trade 02; then contractors' answers, which no operation of this service writes.
 */
async function createDashboardProject(i: number): Promise<{ id: string; trades: Array<{ id: string; number: string }> }> {
  const { createProject: { project } } = await ok(`mutation($input: CreateProjectInput!) { createProject(input: $input) { project { id trades { id number } } } }`, { input: {
    name: `Tableau de bord ${String(i).padStart(2, '0')}`, constructionType: 'office', managers: [{ id: DEMO_IDS.users.architect }],
    tradeListId: DEMO_IDS.tradeLists.standard, responseType: 'DPGF', endOfOfferDate: '2027-06-30',
  } });
  return project;
}

/** See createDashboardProject. */
async function fillDashboardProject(i: number, project: { id: string; trades: Array<{ id: string; number: string }> }): Promise<void> {
  const trade = (n: string) => project.trades.find((x) => x.number === n)!.id;
  const add = async (tradeId: string, budget: number) => (await ok('mutation($p: ID!, $i: AddTemplateInput!) { addTemplate(projectId: $p, input: $i) { template { id } } }', {
    p: project.id, i: { tradeId, budget },
  })).addTemplate.template.id as string;
  const main = await add(trade('01'), 10000 + i);
  const slice = await add(trade('01'), 2500);
  await add(trade('02'), 7000);
  const invite = async (templateId: string, emails: string[]) => (await ok(`mutation($p: ID!, $t: ID!, $c: [ContractorInvitationInput!]!) {
    inviteContractors(projectId: $p, templateId: $t, contractors: $c) { documents { id } } }`, {
    p: project.id, t: templateId, c: emails.map((email) => ({ name: `Entreprise ${email.split('@')[0]}`, email })),
  })).inviteContractors.documents.map((d: { id: string }) => d.id) as string[];
  const [answered, revised] = await invite(main, [`p${i}-gros-oeuvre@example.fr`, `p${i}-maconnerie@example.fr`]);
  const [declined] = await invite(slice, [`p${i}-tranche@example.fr`]);
  const version = (documentId: string, version: number, status: string, subTotal: number) => sql(`
    insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
    values (gen_random_uuid(), now(), now(), ?, ?, ?, ?, 100, false, true, now())`, [documentId, version, status, subTotal]);
  await version(answered, 1, 'ANSWERED', 9800 + i);
  await version(revised, 1, 'ANSWERED', 11000);
  await version(revised, 2, 'IN_REVISION', 10500);
  await version(declined, 1, 'DECLINED', 0);
  await sql(`update document set intention = 'YES', dce_downloaded_at = now() where id = any(array[?]::uuid[])`, [[answered, revised]]);
  await sql(`update document set intention = 'NO' where id = ?`, [declined]);
}

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  // Created one after the other, so the newest-first order is known; filled five at a time.
  const projects = [];
  for (let i = 1; i <= PROJECTS; i++) projects.push(await createDashboardProject(i));
  for (let i = 0; i < PROJECTS; i += 5) {
    await Promise.all(projects.slice(i, i + 5).map((project, k) => fillDashboardProject(i + k + 1, project)));
  }
}, 180_000);
afterAll(() => t.close());

describe('the dashboard query (Query.projects with statistics, templates, documents, versions and contractors)', () => {
  it('runs as many SQL statements for 50 projects as for 1', async () => {
    const one = await t.queries.measure(() => gql(t.url, architect, DASHBOARD, { first: 1 }));
    const fifty = await t.queries.measure(() => gql(t.url, architect, DASHBOARD, { first: PROJECTS }));
    expect(one.result.body.errors).toBeUndefined();
    expect(fifty.result.body.errors).toBeUndefined();
    expect(one.result.body.data.projects.nodes).toHaveLength(1);
    expect(fifty.result.body.data.projects.nodes).toHaveLength(PROJECTS);

    expect(fifty.statements).toBe(one.statements);
    // Each relation is one statement for the whole level: per level, never per record.
    for (const table of ['document_version', 'contractor', 'project_trade', 'template']) {
      const touching = (sqls: string[]) => sqls.filter((s) => new RegExp(`from "?${table}"? `).test(s)).length;
      expect(touching(one.sql)).toBeGreaterThan(0);
      expect(touching(fifty.sql)).toBe(touching(one.sql));
    }
    // 11: count, page, then one per relation (statistics, organization with its users in one statement, trades,
    // managers, templates, template stats, documents, versions, contractors). A template's trade is read through the
    // project's trades, which the same query already loads. The caller is kept from this token's earlier
    // requests (docs/caching.md, "Callers").
    expect(fifty.statements).toBe(11);
  });

  it('reads the templates\' documents, versions and contractors by the page\'s project ids, without waiting for the level above', async () => {
    const { sql, result } = await t.queries.measure(() => gql(t.url, architect, DASHBOARD, { first: 3 }));
    const projects = result.body.data.projects.nodes as DashboardProject[];
    const documentIds = projects.flatMap((p) => p.templates.flatMap((tpl) => tpl.documents.map((d) => d.id)));
    const templateIds = projects.flatMap((p) => p.templates.map((tpl) => tpl.id));
    expect(documentIds.length).toBeGreaterThan(0);
    // Each level's statement, by what it selects.
    const SELECTS = { document: /^\s*select d\.id, d\.template_id\b/, document_version: /^\s*select v\.document_id, v\.version\b/, contractor: /^\s*select c\.id, c\.name\b/ };
    const reading = (table: keyof typeof SELECTS) => sql.filter((s) => SELECTS[table].test(s));
    for (const statement of [...reading('document'), ...reading('document_version'), ...reading('contractor')]) {
      // Sent once the page is known: every project id of the page in it, and no id a lower level answered.
      for (const project of projects) expect(statement).toContain(project.id);
      for (const id of [...templateIds, ...documentIds]) expect(statement).not.toContain(id);
    }
    expect([reading('document').length, reading('document_version').length, reading('contractor').length]).toEqual([1, 1, 1]);
    // The templates' stats too, read by the same project ids.
    const stats = sql.filter((s) => /^\s*select ts\.template_id as id\b/.test(s));
    expect(stats).toHaveLength(1);
    expect(stats[0]).toContain('ts.project_id = any(');
  });

  it('reads only the version columns the query selects (versions { id version status }: no amounts, times or files)', async () => {
    const { sql } = await t.queries.measure(() => gql(t.url, architect, DASHBOARD, { first: 2 }));
    const versions = sql.filter((s) => /^\s*select v\.document_id, v\.version\b/.test(s));
    expect(versions).toHaveLength(1);
    const columns = versions[0].slice(versions[0].indexOf('select') + 6, versions[0].indexOf('from')).split(',').map((c) => c.trim());
    expect(columns).toEqual(['v.document_id', 'v.version', 'v.id', 'v.status']);
  });

  it('runs as many SQL statements for 50 projects as for 1 written as the front end writes it (examples/graphql, fragments and `me`)', async () => {
    const query = print(DashboardDocument);
    const one = await t.queries.measure(() => gql(t.url, architect, query, { first: 1 }));
    const fifty = await t.queries.measure(() => gql(t.url, architect, query, { first: PROJECTS }));
    expect([one.result.body.errors, fifty.result.body.errors]).toEqual([undefined, undefined]);
    expect(fifty.result.body.data.projects.nodes).toHaveLength(PROJECTS);
    expect(fifty.result.body.data.projects.nodes.flatMap((p: { templates: unknown[] }) => p.templates)).toHaveLength(PROJECTS * 3);
    // The 11 above, and `me` (the caller's user row).
    expect([one.statements, fifty.statements]).toEqual([12, 12]);
  });

  it('really returns every level for every project, so the count above is not vacuous', async () => {
    const res = await gql(t.url, architect, DASHBOARD, { first: PROJECTS });
    const nodes: DashboardProject[] = res.body.data.projects.nodes;
    expect(nodes.map((p) => p.name)).toEqual(Array.from({ length: PROJECTS }, (_, i) => `Tableau de bord ${String(PROJECTS - i).padStart(2, '0')}`));
    const contractorIds = new Set<string>();
    for (const project of nodes) {
      expect(project.organization).toEqual({ id: DEMO_IDS.organizations.atelierDemo });
      expect(project.managers).toEqual([{ id: DEMO_IDS.users.architect }]);
      expect(project.trades).toHaveLength(8);
      expect(project.templates).toHaveLength(3);
      const [main, slice, empty] = project.templates;
      // Both invited by one request: same creation time, so their order is the ids'.
      expect(main.documents.map((d) => d.state).sort()).toEqual(['ANSWERED', 'IN_REVISION']);
      expect(main.documents.find((d) => d.state === 'IN_REVISION')!.versions.map(({ version, status }) => ({ version, status }))).toEqual([{ version: 1, status: 'ANSWERED' }, { version: 2, status: 'IN_REVISION' }]);
      expect([main.trade.name, slice.trade.name, empty.trade.name]).toEqual(['Gros œuvre', 'Gros œuvre', 'Charpente']);
      expect(main.trade.id).toBe(project.trades[0].id);
      expect(main.stats.id).toBe(`${main.id}:stats`);
      expect(slice.documents.map((d) => [d.state, d.versions.length])).toEqual([['DECLINED', 1]]);
      expect(empty.documents).toEqual([]);
      expect(main.stats).toMatchObject({ contractors: 2, contractorsAnswers: 1, contractorsInRevision: 1 });
      expect(project.statistics).toMatchObject({ id: `${project.id}:statistics`, contractors: 3, answered: 1, declined: 1 });
      for (const d of [...main.documents, ...slice.documents]) {
        expect(d.contractor.name).toMatch(/^Entreprise p\d+-/);
        contractorIds.add(d.contractor.id);
      }
    }
    expect(contractorIds.size).toBe(PROJECTS * 3);
  });

  it('runs as many SQL statements for projectsStatistics of 50 projects as for 1', async () => {
    const ids = (await gql(t.url, architect, '{ projects(first: 50) { nodes { id } } }')).body.data.projects.nodes.map((p: { id: string }) => p.id);
    const query = `query($ids: [ID!]!) { projectsStatistics(ids: $ids) { projectId ${STATISTICS} } }`;
    const one = await t.queries.measure(() => gql(t.url, architect, query, { ids: ids.slice(0, 1) }));
    const fifty = await t.queries.measure(() => gql(t.url, architect, query, { ids }));
    expect(fifty.result.body.data.projectsStatistics.map((s: { projectId: string }) => s.projectId)).toEqual(ids);
    expect(fifty.statements).toBe(one.statements);
  });
});

describe('reading ahead by project (DocumentService.documentsByProject, versionsByProject, contractorsByProject)', () => {
  const OTHER: Caller = {
    userId: DEMO_IDS.users.other, email: 'other@demo.test', adminOrganizationIds: [DEMO_IDS.organizations.cabinetSud],
    currentOrganizationId: DEMO_IDS.organizations.cabinetSud, adminHeadquarterIds: [],
  };
  const service = (caller: Caller) => new DocumentService({ em: t.orm.em.fork(), caller, config: t.config });
  const read = async (caller: Caller, projectIds: string[]) => {
    const documents = service(caller);
    return Promise.all([
      documents.documentsByProject(projectIds, { state: true, intention: true, dceDownloadedAt: true }),
      documents.versionsByProject(projectIds, VERSION_FIELDS),
      documents.contractorsByProject(projectIds),
    ]);
  };

  it('reads ahead only for an operation whose selection is known (a subscription\'s delivery reads one level at a time)', async () => {
    const [project] = (await ok(DASHBOARD, { first: 1 })).projects.nodes as DashboardProject[];
    const loadersFor = (selection: OperationSelection) => createLoaders({ em: t.orm.em.fork(), caller: DEMO_ARCHITECT_CALLER, config: t.config }, selection);
    const unknown = await t.queries.measure(() => loadersFor(new OperationSelection()).templates.load(project.id));
    expect(unknown.result.map((tpl) => tpl.id).sort()).toEqual(project.templates.map((tpl) => tpl.id).sort());
    expect(unknown.statements).toBe(1);
    const known = new OperationSelection();
    const document = parse(DASHBOARD);
    known.read(await graphqlSchema(), document, document.definitions[0] as OperationDefinitionNode);
    const read = await t.queries.measure(() => loadersFor(known).templates.load(project.id));
    // The templates, and read ahead with them: their stats, documents, versions and contractors.
    expect(read.statements).toBe(5);
  });

  it('reads nothing of projects of organizations where the caller is not Administrator', async () => {
    const projects = (await ok(DASHBOARD, { first: 3 })).projects.nodes as DashboardProject[];
    const ids = projects.map((p) => p.id);
    const [documents, versions, contractors] = await read(DEMO_ARCHITECT_CALLER, ids);
    // Not vacuous: the owner reads every level, as the level-by-level loaders do.
    const expected = projects.flatMap((p) => p.templates.flatMap((tpl) => tpl.documents));
    expect([...documents.values()].flat().map((d) => d.id).sort()).toEqual(expected.map((d) => d.id).sort());
    expect([...versions.values()].flat().map((v) => v.id).sort()).toEqual(expected.flatMap((d) => d.versions.map((v) => v.id)).sort());
    expect([...contractors.keys()].sort()).toEqual([...new Set(expected.map((d) => d.contractor.id))].sort());

    const [otherDocuments, otherVersions, otherContractors] = await read(OTHER, ids);
    expect([otherDocuments.size, otherVersions.size, otherContractors.size]).toEqual([0, 0, 0]);
  });
});

describe('versions kept under their document\'s template (document_version.template_id, by trigger)', () => {
  const mismatched = () => sql<{ n: number }>(`select count(*)::int as n from document_version v join document d on d.id = v.document_id
    where v.template_id is distinct from d.template_id`);

  it('is set on every version, written by the service (the demo data) or straight in SQL (the answers above)', async () => {
    const [{ n: versions }] = await sql<{ n: number }>('select count(*)::int as n from document_version');
    expect(versions).toBeGreaterThan(PROJECTS * 4);
    expect((await mismatched())[0].n).toBe(0);
  });

  it('cannot name another template than its document\'s, on insert or update', async () => {
    const [project] = (await ok(DASHBOARD, { first: 1 })).projects.nodes as DashboardProject[];
    const [withDocuments, other] = [project.templates.find((tpl) => tpl.documents.length)!, project.templates.find((tpl) => !tpl.documents.length)!];
    const document = withDocuments.documents[0];
    const [row] = await sql<{ id: string; template_id: string }>(`insert into document_version (id, created_at, updated_at, document_id, template_id, version, status, sub_total)
      values (gen_random_uuid(), now(), now(), ?, ?, 90, 'DRAFT', 1) returning id, template_id`, [document.id, other.id]);
    try {
      expect(row.template_id).toBe(withDocuments.id);
      const [updated] = await sql<{ template_id: string }>('update document_version set template_id = ? where id = ? returning template_id', [other.id, row.id]);
      expect(updated.template_id).toBe(withDocuments.id);
    } finally {
      await sql('delete from document_version where id = ?', [row.id]);
    }
  });

  it('refuses a version of an unknown document as the foreign key does (23503)', async () => {
    await expect(sql(`insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total)
      values (gen_random_uuid(), now(), now(), gen_random_uuid(), 1, 'DRAFT', 1)`)).rejects.toMatchObject({ code: '23503' });
  });

  it('follows a document moved to another template: the dashboard shows its versions under the new one', async () => {
    // To another project's template: read by project, versions left under the old template would be missed.
    const [source, target] = (await ok(DASHBOARD, { first: 2 })).projects.nodes as DashboardProject[];
    const from = source.templates.find((tpl) => tpl.documents.some((d) => d.versions.length))!;
    const to = target.templates.find((tpl) => !tpl.documents.length)!;
    const document = from.documents.find((d) => d.versions.length)!;
    await sql('update document set template_id = ? where id = ?', [to.id, document.id]);
    try {
      expect((await mismatched())[0].n).toBe(0);
      const [, moved] = (await ok(DASHBOARD, { first: 2 })).projects.nodes as DashboardProject[];
      const under = moved.templates.find((tpl) => tpl.id === to.id)!;
      expect(under.documents.map((d) => ({ id: d.id, versions: d.versions }))).toEqual([{ id: document.id, versions: document.versions }]);
    } finally {
      await sql('update document set template_id = ? where id = ?', [from.id, document.id]);
    }
    expect((await mismatched())[0].n).toBe(0);
  });
});

describe('execution by compiled queries (graphql-jit)', () => {
  it('answers what graphql-js\'s own executor answers over the same schema, data and errors alike', async () => {
    const schema = await graphqlSchema();
    const caller = await loadCaller(t.orm.em.fork(), { sub: DEMO_IDS.users.architect } as VerifiedToken);
    const cases: Array<[string, Record<string, unknown>]> = [
      [DASHBOARD, { first: PROJECTS }],
      [print(DashboardDocument), { first: 5 }],
      [`query($id: ID!) { project(id: $id) { id name } projects(first: 2) { nodes { id } } }`, { id: DEMO_IDS.projects.cabinetSudHall }],
    ];
    for (const [query, variables] of cases) {
      const answered = await gql(t.url, architect, query, variables);
      const reference = await execute({
        schema, document: parse(query), variableValues: variables,
        contextValue: createContext({ em: t.orm.em.fork(), caller, config: t.config }),
      });
      expect(answered.body.data).toEqual(JSON.parse(JSON.stringify(reference.data)));
      const errors = (list?: ReadonlyArray<{ message: string; path?: ReadonlyArray<string | number> }>) => list?.map((e) => [e.message, e.path]);
      expect(errors(answered.body.errors)).toEqual(errors(reference.errors));
      }
    });
  });

describe('Project.leveling and Template.leveling on a dashboard', () => {
  /** Every project's leveling, and every template's at another threshold, with the contractors of entries and columns. */
  const LEVELING = `query($first: Int) { projects(first: $first) { nodes { id name
    leveling { id totals { lowest retained budget } contractors { contractorId contractor { id name } }
      lots { id name summary { offers median retained } documents { documentId rank lowest abnormallyLow offer { amount } contractor { id name } } } }
    templates { id leveling(abnormallyLowBelowMedianPercent: 5) { id summary { offers } documents { documentId rank abnormallyLow } } } } } }`;

  it('runs as many SQL statements for 50 projects\' leveling as for 1', async () => {
    const one = await t.queries.measure(() => gql(t.url, architect, LEVELING, { first: 1 }));
    const fifty = await t.queries.measure(() => gql(t.url, architect, LEVELING, { first: PROJECTS }));
    expect([one.result.body.errors, fifty.result.body.errors]).toEqual([undefined, undefined]);
    expect(fifty.result.body.data.projects.nodes).toHaveLength(PROJECTS);
    expect(fifty.statements).toBe(one.statements);
    // page (no count: totalCount is not asked), the projects' leveling (lots, documents), templates, the templates'
    // leveling (lots, documents), contractors; the caller is kept from this token's earlier requests.
    expect(fifty.statements).toBe(7);
    expect(fifty.sql.filter((s) => s.includes('document_statistics'))).toHaveLength(2);
  });

  it('really levels every project, so the count above is not vacuous', async () => {
    const res = await gql(t.url, architect, LEVELING, { first: PROJECTS });
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.projects.nodes as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const project of nodes) {
      const i = Number(project.name.slice(-2));
      // Main template: offers 9,800 + i - 100 (answered) and 11,000 - 100 (its ANSWERED version before the revision).
      expect(project.leveling.lots.map((l: { name: string; summary: { offers: number } }) => [l.name, l.summary.offers])).toEqual([['Gros œuvre', 2], ['Gros œuvre - Tranche 1', 0], ['Charpente', 0]]);
      const [main] = project.leveling.lots;
      expect(main.documents.map((d: { rank: number | null; offer: { amount: number } | null }) => [d.rank, d.offer?.amount ?? null])).toEqual([[1, 9700 + i], [2, 10900]]);
      expect(main.summary).toEqual({ offers: 2, median: (9700 + i + 10900) / 2, retained: 9700 + i });
      expect(project.leveling.totals).toEqual({ lowest: 9700 + i, retained: 9700 + i, budget: 10000 + i + 2500 + 7000 });
      expect(project.leveling.contractors.map((c: { contractor: { name: string } }) => c.contractor.name)).toEqual([`Entreprise p${i}-gros-oeuvre`, `Entreprise p${i}-maconnerie`]);
      expect(project.templates.map((x: { id: string; leveling: { id: string; summary: { offers: number } } }) => [x.leveling.id, x.leveling.summary.offers]))
        .toEqual(project.templates.map((x: { id: string }, k: number) => [`${x.id}:leveling:5`, k === 0 ? 2 : 0]));
    }
  });
});

describe('GraphQL and REST agree', () => {
  it('on the statistics (#5) and the template stats (#10) of every dashboard project', async () => {
    const res = await gql(t.url, architect, `{ projects(first: ${PROJECTS}) { nodes { id statistics { ${STATISTICS} } templates { id stats { ${TEMPLATE_STATS} } } } } }`);
    const nodes = res.body.data.projects.nodes as Array<{ id: string; statistics: unknown; templates: Array<{ id: string; stats: unknown }> }>;
    expect(nodes).toHaveLength(PROJECTS);
    for (const project of nodes) {
      const statistics = await request(t.url, 'GET', `/api/svc/v1/projects/${project.id}/statistics`, { token: architect });
      expect(toRest(project.statistics)).toEqual(statistics.body.project.statistics);
      const templates = await request(t.url, 'GET', `/api/svc/v1/projects/${project.id}/templates`, { token: architect });
      expect(project.templates.map((x) => [x.id, toRest(x.stats)])).toEqual(templates.body.templates.map((x: { id: string; stats: unknown }) => [x.id, x.stats]));
    }
  });

  it('on the statistics and template stats of the demo projects, archived included', async () => {
    const { projects: PRJ } = DEMO_IDS;
    for (const id of [PRJ.residence, PRJ.school, PRJ.archivedHouse, PRJ.nordOffices]) {
      const res = await gql(t.url, architect, `query($id: ID!) { project(id: $id) { statistics { ${STATISTICS} } templates { id stats { ${TEMPLATE_STATS} } } } }`, { id });
      const { statistics, templates } = res.body.data.project;
      const rest = await request(t.url, 'GET', `/api/svc/v1/projects/${id}/statistics`, { token: architect });
      expect(toRest(statistics)).toEqual(rest.body.project.statistics);
      const restTemplates = await request(t.url, 'GET', `/api/svc/v1/projects/${id}/templates`, { token: architect });
      expect(templates.length).toBeGreaterThan(0);
      expect(templates.map((x: { id: string; stats: unknown }) => [x.id, toRest(x.stats)])).toEqual(
        restTemplates.body.templates.map((x: { id: string; stats: unknown }) => [x.id, x.stats]),
      );
    }
  });
});
