import { DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { answered, gql } from './support/graphql';

let t: TestApp;
let architect: string;

const { projects: PRJ, templates: TPL, contractors: CTR, organizations: ORG, projectTrades: TRD } = DEMO_IDS;
const UNKNOWN = '0b0b0b0b-0000-4000-8000-000000000000';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** Names only Cabinet Sud's records carry: none may appear in an answer to architect@demo.test. */
const CABINET_SUD_NAMES = ['Cabinet Sud', 'Halle de marché', 'Carpentras', 'Charpente métallique'];

const CREATE_TRADE = `mutation($p: ID!, $i: CreateProjectTradeInput!) {
  createProjectTrade(projectId: $p, input: $i) { trade { id projectId number name shortName comment createdAt updatedAt } project { id trades { id number } } } }`;
const UPDATE_TRADE = `mutation($p: ID!, $id: ID!, $i: UpdateProjectTradeInput!) {
  updateProjectTrade(projectId: $p, tradeId: $id, input: $i) { trade { id projectId number name shortName comment updatedAt } project { id trades { id number } } } }`;
const DELETE_TRADE = 'mutation($p: ID!, $id: ID!) { deleteProjectTrade(projectId: $p, tradeId: $id) { deletedTradeId project { id trades { id } } } }';
const ADD_TEMPLATE = `mutation($p: ID!, $i: AddTemplateInput!) { addTemplate(projectId: $p, input: $i) {
  template { id projectId isSlice slice budgets { value } trade { id number name } responseType endOfOfferDate consultationStartedAt
    stats { contractors deltaBudget } documents { id } slices { id } }
  project { id templates { id } } parentTemplate { id slices { id } } } }`;
const DELETE_TEMPLATE = `mutation($p: ID!, $id: ID!) { deleteTemplate(projectId: $p, templateId: $id) {
  deletedTemplateIds project { id templates { id } } parentTemplate { id slices { id } } } }`;
const INVITE = `mutation($p: ID!, $t: ID!, $c: [ContractorInvitationInput!]!) { inviteContractors(projectId: $p, templateId: $t, contractors: $c) {
  created documents { id state intention dceDownloadedAt contractor { id name email phone information { fiscalNumber } } versions { version } }
  template { id documents { id } stats { contractors } } } }`;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return t.orm.em.fork().getConnection().execute<T[]>(query, params);
}
const count = async (query: string, params: unknown[] = []) => Number((await sql<{ n: string }>(query, params))[0].n);
const tradeCount = () => count('select count(*) as n from project_trade');
const templateCount = () => count('select count(*) as n from template');
const ledger = (organizationId: string) => sql<{ amount: number; kind: string; reference_id: string }>(
  'select amount, kind, reference_id from credit_ledger_entry where organization_id = ? order by reference_id', [organizationId],
);
const ledgerCount = () => count('select count(*) as n from credit_ledger_entry');
const documentCount = () => count('select count(*) as n from document');
const contractorCount = () => count('select count(*) as n from contractor');

const run = (query: string, variables: Record<string, unknown>, token = architect) => gql(t.url, token, query, variables);
/** The one error of an answer: its code, and no data. */
function failure(res: { body: { data?: unknown; errors?: Array<{ message: string; extensions: Record<string, unknown> }> } }) {
  expect(res.body.errors).toHaveLength(1);
  if ('data' in res.body) expect(res.body.data).toBeNull();
  return res.body.errors![0];
}
const codeOf = (res: Parameters<typeof failure>[0]) => failure(res).extensions.code;

const templatesOf = async (projectId: string) => {
  const res = await gql(t.url, architect, 'query($id: ID!) { project(id: $id) { templates { id isSlice slice slices { id } trade { number } } } }', { id: projectId });
  return res.body.data.project.templates as Array<{ id: string; isSlice: boolean; slice: string | null; slices: Array<{ id: string }>; trade: { number: string } }>;
};
const tradesOf = async (projectId: string) => {
  const res = await gql(t.url, architect, 'query($id: ID!) { project(id: $id) { trades { id number name comment } } }', { id: projectId });
  return res.body.data.project.trades as Array<{ id: string; number: string; name: string; comment: string | null }>;
};
const addTemplate = async (tradeId: string, extra: Record<string, unknown> = {}) => {
  const res = await run(ADD_TEMPLATE, { p: PRJ.residence, i: { tradeId, ...extra } });
  expect(res.body.errors).toBeUndefined();
  return res.body.data.addTemplate.template as { id: string; isSlice: boolean; slice: string | null };
};

describe('Mutation.createProjectTrade', () => {
  it('adds a trade to the project, listed by number in Project.trades', async () => {
    const res = await run(CREATE_TRADE, { p: PRJ.residence, i: { name: 'Serrurerie', number: '09', shortName: 'SE' } });
    expect(res.body.errors).toBeUndefined();
    const { trade, project } = res.body.data.createProjectTrade;
    expect(trade).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), projectId: PRJ.residence, number: '09', name: 'Serrurerie', shortName: 'SE',
      comment: null, createdAt: expect.stringMatching(TIMESTAMP), updatedAt: expect.stringMatching(TIMESTAMP),
    });
    const trades = await tradesOf(PRJ.residence);
    expect(trades.map((x) => x.number)).toEqual(['01', '02', '03', '04', '05', '06', '07', '08', '09']);
    expect(trades[8].id).toBe(trade.id);
    // The payload's project lists it already, as the next query does.
    expect(project).toEqual({ id: PRJ.residence, trades: trades.map(({ id, number }) => ({ id, number })) });
  });

  it('refuses `comment`, which is not accepted on create, with BAD_USER_INPUT naming it, and adds nothing', async () => {
    const before = await tradeCount();
    const res = await run(CREATE_TRADE, { p: PRJ.residence, i: { name: 'Vitrerie', number: '10', shortName: 'VI', comment: 'no' } });
    // CreateProjectTradeInput has no `comment`: GraphQL refuses the variables before execution.
    expect(res.status).toBe(400);
    const error = failure(res);
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
    expect(error.message).toContain('"comment"');
    expect(await tradeCount()).toBe(before);
  });

  it('answers BAD_USER_INPUT listing every failing field in camelCase', async () => {
    const before = await tradeCount();
    const res = await run(CREATE_TRADE, { p: PRJ.residence, i: { name: '', number: '1'.repeat(33), shortName: '' } });
    const error = failure(res);
    expect(error.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      errors: expect.arrayContaining([
        { field: 'name', message: expect.any(String) },
        { field: 'number', message: expect.stringContaining('32') },
        { field: 'shortName', message: expect.any(String) },
      ]),
    });
    expect((error.extensions.errors as unknown[])).toHaveLength(3);
    expect(await tradeCount()).toBe(before);
  });

  it('answers NOT_FOUND for an unknown project and for another organization\'s, CONFLICT for an archived one', async () => {
    const before = await tradeCount();
    const input = { name: 'Serrurerie', number: '09', shortName: 'SE' };
    expect(codeOf(await run(CREATE_TRADE, { p: UNKNOWN, i: input }))).toBe('NOT_FOUND');
    const foreign = await run(CREATE_TRADE, { p: PRJ.cabinetSudHall, i: input });
    expect(codeOf(foreign)).toBe('NOT_FOUND');
    for (const name of CABINET_SUD_NAMES) expect(foreign.text).not.toContain(name);
    expect(codeOf(await run(CREATE_TRADE, { p: PRJ.archivedHouse, i: input }))).toBe('CONFLICT');
    expect(await tradeCount()).toBe(before);
  });
});

describe('Mutation.updateProjectTrade', () => {
  const input = { name: 'Gros œuvre – structure', number: '01', shortName: 'GOS' };

  it('replaces name, number and short name; `comment` set, kept when left out, removed with null', async () => {
    const id = TRD.residence['01'];
    const set = await run(UPDATE_TRADE, { p: PRJ.residence, id, i: { ...input, comment: 'Fondations spéciales' } });
    expect(set.body.errors).toBeUndefined();
    expect(set.body.data.updateProjectTrade.trade).toMatchObject({ id, projectId: PRJ.residence, ...input, comment: 'Fondations spéciales' });
    expect(set.body.data.updateProjectTrade.trade.updatedAt).not.toBe('2026-06-02T08:30:00.000000Z');

    const kept = await run(UPDATE_TRADE, { p: PRJ.residence, id, i: { ...input, name: 'Gros œuvre' } });
    expect(kept.body.data.updateProjectTrade.trade).toMatchObject({ name: 'Gros œuvre', comment: 'Fondations spéciales' });
    const removed = await run(UPDATE_TRADE, { p: PRJ.residence, id, i: { ...input, comment: null } });
    expect(removed.body.data.updateProjectTrade.trade.comment).toBeNull();
    expect((await tradesOf(PRJ.residence)).find((x) => x.id === id)).toMatchObject({ name: 'Gros œuvre – structure', comment: null });
  });

  it('answers in each payload the project as that mutation left it, even after an earlier mutation of the same request', async () => {
    const id = TRD.residence['07'];
    const res = await run(`mutation($p: ID!, $id: ID!) {
      first: updateProjectTrade(projectId: $p, tradeId: $id, input: { name: "Menuiseries A", number: "07", shortName: "MA" }) { project { trades { id name } } }
      second: updateProjectTrade(projectId: $p, tradeId: $id, input: { name: "Menuiseries B", number: "07", shortName: "MB" }) { project { trades { id name } } } }`,
    { p: PRJ.residence, id });
    expect(res.body.errors).toBeUndefined();
    const nameIn = (payload: { project: { trades: Array<{ id: string; name: string }> } }) => payload.project.trades.find((x) => x.id === id)!.name;
    expect([nameIn(res.body.data.first), nameIn(res.body.data.second)]).toEqual(['Menuiseries A', 'Menuiseries B']);
    await run(UPDATE_TRADE, { p: PRJ.residence, id, i: { name: 'Plomberie', number: '07', shortName: 'PB' } });
  });

  it('answers BAD_USER_INPUT listing every failing field in camelCase, and changes nothing', async () => {
    const res = await run(UPDATE_TRADE, { p: PRJ.residence, id: TRD.residence['02'], i: { name: '', number: '02', shortName: 'CH', comment: 'x'.repeat(5001) } });
    expect(failure(res).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'name', message: expect.any(String) }, { field: 'comment', message: expect.stringContaining('5000') }],
    });
    expect((await tradesOf(PRJ.residence)).find((x) => x.id === TRD.residence['02'])).toMatchObject({ name: 'Charpente', comment: null });
  });

  it('answers NOT_FOUND for an unknown trade, a trade of another project, another organization\'s trade; CONFLICT when archived', async () => {
    expect(codeOf(await run(UPDATE_TRADE, { p: PRJ.residence, id: UNKNOWN, i: input }))).toBe('NOT_FOUND');
    expect(codeOf(await run(UPDATE_TRADE, { p: PRJ.residence, id: TRD.school['01'], i: input }))).toBe('NOT_FOUND');
    const foreign = await run(UPDATE_TRADE, { p: PRJ.cabinetSudHall, id: TRD.cabinetSudHall['02'], i: input });
    expect(codeOf(foreign)).toBe('NOT_FOUND');
    for (const name of CABINET_SUD_NAMES) expect(foreign.text).not.toContain(name);
    const [sud] = await sql<{ name: string }>('select name from project_trade where id = ?', [TRD.cabinetSudHall['02']]);
    expect(sud.name).toBe('Charpente métallique');
    expect(codeOf(await run(UPDATE_TRADE, { p: PRJ.archivedHouse, id: TRD.archivedHouse['02'], i: input }))).toBe('CONFLICT');
    const [archived] = await sql<{ name: string }>('select name from project_trade where id = ?', [TRD.archivedHouse['02']]);
    expect(archived.name).toBe('Charpente');
  });
});

describe('Mutation.deleteProjectTrade', () => {
  it('deletes a trade without templates: answers its id and the project\'s trades without it, then gone', async () => {
    const created = await run(CREATE_TRADE, { p: PRJ.school, i: { name: 'Peinture', number: '06', shortName: 'PE' } });
    const id = created.body.data.createProjectTrade.trade.id;
    const res = await run(DELETE_TRADE, { p: PRJ.school, id });
    const remaining = (await tradesOf(PRJ.school)).map((x) => ({ id: x.id }));
    expect(res.body).toEqual(answered({ deleteProjectTrade: { deletedTradeId: id, project: { id: PRJ.school, trades: remaining } } }));
    expect(remaining).toHaveLength(5);
    expect(remaining.map((x) => x.id)).not.toContain(id);
    expect(codeOf(await run(DELETE_TRADE, { p: PRJ.school, id }))).toBe('NOT_FOUND');
  });

  it('answers CONFLICT while templates use the trade, and keeps it', async () => {
    const res = await run(DELETE_TRADE, { p: PRJ.residence, id: TRD.residence['06'] });
    const error = failure(res);
    expect(error.extensions).toEqual({ code: 'CONFLICT' });
    expect(error.message).toMatch(/templates/);
    expect((await tradesOf(PRJ.residence)).map((x) => x.id)).toContain(TRD.residence['06']);
  });

  it('answers CONFLICT below an archived project, NOT_FOUND for another organization\'s trade, and deletes nothing', async () => {
    const before = await tradeCount();
    // Trade 02 of the archived house has no template: only the archive forbids the delete.
    expect(codeOf(await run(DELETE_TRADE, { p: PRJ.archivedHouse, id: TRD.archivedHouse['02'] }))).toBe('CONFLICT');
    expect(codeOf(await run(DELETE_TRADE, { p: PRJ.cabinetSudHall, id: TRD.cabinetSudHall['01'] }))).toBe('NOT_FOUND');
    expect(codeOf(await run(DELETE_TRADE, { p: PRJ.residence, id: TRD.cabinetSudHall['01'] }))).toBe('NOT_FOUND');
    expect(await tradeCount()).toBe(before);
  });
});

describe('Mutation.addTemplate', () => {
  it('adds the trade\'s template first, then slices named "Tranche N" or as asked', async () => {
    const main = await run(ADD_TEMPLATE, { p: PRJ.residence, i: { tradeId: TRD.residence['05'], budget: 1234.5 } });
    expect(main.body.errors).toBeUndefined();
    const { template, project, parentTemplate } = main.body.data.addTemplate;
    expect(template).toEqual({
      id: expect.any(String), projectId: PRJ.residence, isSlice: false, slice: null, budgets: { value: 1234.5 },
      trade: { id: TRD.residence['05'], number: '05', name: 'Plâtrerie' }, responseType: 'DPGF',
      endOfOfferDate: '2027-01-29T12:00:00.000000Z', consultationStartedAt: null,
      stats: { contractors: 0, deltaBudget: 0 }, documents: [], slices: [],
    });
    // The project's templates with the new one, as the next query lists them; no parent for a main template.
    expect(project).toEqual({ id: PRJ.residence, templates: (await templatesOf(PRJ.residence)).map(({ id }) => ({ id })) });
    expect(project.templates.map((x: { id: string }) => x.id)).toContain(template.id);
    expect(parentTemplate).toBeNull();
    const first = await addTemplate(TRD.residence['05']);
    expect(first).toMatchObject({ isSlice: true, slice: 'Tranche 1', budgets: { value: 0 } });
    const named = await addTemplate(TRD.residence['05'], { sliceName: 'Phase B', budget: 10 });
    expect(named).toMatchObject({ isSlice: true, slice: 'Phase B', budgets: { value: 10 } });
    const thirdRes = await run(ADD_TEMPLATE, { p: PRJ.residence, i: { tradeId: TRD.residence['05'] } });
    const third = thirdRes.body.data.addTemplate.template;
    expect(third.slice).toBe('Tranche 3');
    // A slice's payload gives its main template with the slices it now has.
    expect(thirdRes.body.data.addTemplate.parentTemplate).toEqual({ id: template.id, slices: [{ id: first.id }, { id: named.id }, { id: third.id }] });

    const templates = await templatesOf(PRJ.residence);
    const listed = templates.find((x) => x.id === template.id)!;
    expect(listed.slices.map((s) => s.id)).toEqual([first.id, named.id, third.id]);
  });

  it('reads its payload\'s project through the request\'s loaders: as many statements with 5 more templates in the project', async () => {
    const PAYLOAD = `mutation($p: ID!, $i: AddTemplateInput!) { addTemplate(projectId: $p, input: $i) { template { id }
      project { id statistics { id total: contractors } trades { id } managers { id } templates { id trade { id name } stats { id } slices { id }
        documents { id contractor { id name } versions { id status } } } } parentTemplate { id slices { id } } } }`;
    const slice = () => t.queries.measure(() => run(PAYLOAD, { p: PRJ.residence, i: { tradeId: TRD.residence['06'] } }));
    const first = await slice();
    for (let i = 0; i < 4; i++) await slice();
    const later = await slice();
    expect([first.result.body.errors, later.result.body.errors]).toEqual([undefined, undefined]);
    expect(later.result.body.data.addTemplate.project.templates.length).toBe(first.result.body.data.addTemplate.project.templates.length + 5);
    expect(later.statements).toBe(first.statements);
  });

  it('answers BAD_USER_INPUT listing every failing field, and a trade of another project as a bad tradeId', async () => {
    const before = await templateCount();
    const bad = await run(ADD_TEMPLATE, { p: PRJ.residence, i: { tradeId: 'lot-05', budget: -1, sliceName: '' } });
    expect(failure(bad).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      errors: expect.arrayContaining([{ field: 'tradeId', message: 'must be a UUID' }, { field: 'budget', message: 'must be at least 0' }]),
    });
    for (const tradeId of [TRD.school['01'], TRD.cabinetSudHall['02']]) {
      const res = await run(ADD_TEMPLATE, { p: PRJ.residence, i: { tradeId } });
      expect(failure(res).extensions).toEqual({ code: 'BAD_USER_INPUT', errors: [{ field: 'tradeId', message: 'is not a trade of this project' }] });
      for (const name of CABINET_SUD_NAMES) expect(res.text).not.toContain(name);
    }
    expect(await templateCount()).toBe(before);
  });

  it('answers NOT_FOUND for another organization\'s project and CONFLICT below an archived one', async () => {
    const before = await templateCount();
    expect(codeOf(await run(ADD_TEMPLATE, { p: PRJ.cabinetSudHall, i: { tradeId: TRD.cabinetSudHall['01'] } }))).toBe('NOT_FOUND');
    expect(codeOf(await run(ADD_TEMPLATE, { p: UNKNOWN, i: { tradeId: TRD.residence['03'] } }))).toBe('NOT_FOUND');
    expect(codeOf(await run(ADD_TEMPLATE, { p: PRJ.archivedHouse, i: { tradeId: TRD.archivedHouse['02'] } }))).toBe('CONFLICT');
    expect(await templateCount()).toBe(before);
  });
});

describe('Mutation.deleteTemplate', () => {
  it('deletes one slice, then a template with its remaining slices', async () => {
    const main = await addTemplate(TRD.residence['04']);
    const [a, b] = [await addTemplate(TRD.residence['04']), await addTemplate(TRD.residence['04'])];
    const slice = await run(DELETE_TEMPLATE, { p: PRJ.residence, id: a.id });
    let ids = (await templatesOf(PRJ.residence)).map((x) => x.id);
    expect(ids).toEqual(expect.arrayContaining([main.id, b.id]));
    expect(ids).not.toContain(a.id);
    // The slice, the project's templates and the main template's slices as they now are.
    expect(slice.body).toEqual(answered({ deleteTemplate: {
      deletedTemplateIds: [a.id], project: { id: PRJ.residence, templates: ids.map((id) => ({ id })) }, parentTemplate: { id: main.id, slices: [{ id: b.id }] },
    } }));
    const whole = await run(DELETE_TEMPLATE, { p: PRJ.residence, id: main.id });
    ids = (await templatesOf(PRJ.residence)).map((x) => x.id);
    expect(ids).not.toContain(main.id);
    expect(ids).not.toContain(b.id);
    // A main template goes with its remaining slices; no parent.
    expect(whole.body).toEqual(answered({ deleteTemplate: {
      deletedTemplateIds: [main.id, b.id], project: { id: PRJ.residence, templates: ids.map((id) => ({ id })) }, parentTemplate: null,
    } }));
  });

  it('deletes a template whose documents hold no ANSWERED version, with its documents', async () => {
    expect(await count('select count(*) as n from document where template_id = ?', [TPL.residencePlomberie])).toBe(2);
    const res = await run(DELETE_TEMPLATE, { p: PRJ.residence, id: TPL.residencePlomberie });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.deleteTemplate.deletedTemplateIds).toEqual([TPL.residencePlomberie]);
    expect(await count('select count(*) as n from document where template_id = ?', [TPL.residencePlomberie])).toBe(0);
  });

  it('answers CONFLICT for a template or slice holding an ANSWERED version, and keeps them', async () => {
    const before = await templateCount();
    for (const id of [TPL.residenceGrosOeuvre, TPL.residenceGrosOeuvreTranche1, TPL.residenceCharpente]) {
      const error = failure(await run(DELETE_TEMPLATE, { p: PRJ.residence, id }));
      expect(error.extensions).toEqual({ code: 'CONFLICT' });
      expect(error.message).toMatch(/answered/i);
    }
    expect(await templateCount()).toBe(before);
    expect((await templatesOf(PRJ.residence)).find((x) => x.id === TPL.residenceGrosOeuvre)!.slices).toHaveLength(2);
  });

  it('answers CONFLICT for a main template when only one of its slices holds an answer', async () => {
    const main = await addTemplate(TRD.residence['08']);
    const slice = await addTemplate(TRD.residence['08']);
    const invited = await run(INVITE, { p: PRJ.residence, t: slice.id, c: [{ name: 'Peintures Roche', email: 'devis@peintures-roche.fr' }] });
    const [document] = invited.body.data.inviteContractors.documents;
    await sql(`insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
      values (gen_random_uuid(), now(), now(), ?, 1, 'ANSWERED', 900, 0, false, false, now())`, [document.id]);
    expect(codeOf(await run(DELETE_TEMPLATE, { p: PRJ.residence, id: main.id }))).toBe('CONFLICT');
    expect(codeOf(await run(DELETE_TEMPLATE, { p: PRJ.residence, id: slice.id }))).toBe('CONFLICT');
    expect((await templatesOf(PRJ.residence)).map((x) => x.id)).toEqual(expect.arrayContaining([main.id, slice.id]));
  });

  it('answers NOT_FOUND for an unknown or another organization\'s template, CONFLICT below an archived project', async () => {
    const before = await templateCount();
    expect(codeOf(await run(DELETE_TEMPLATE, { p: PRJ.residence, id: UNKNOWN }))).toBe('NOT_FOUND');
    // A template of another project of the caller is not found under this one.
    expect(codeOf(await run(DELETE_TEMPLATE, { p: PRJ.residence, id: TPL.schoolMenuiseries }))).toBe('NOT_FOUND');
    for (const p of [PRJ.residence, PRJ.cabinetSudHall]) {
      const res = await run(DELETE_TEMPLATE, { p, id: TPL.cabinetSudCharpente });
      expect(codeOf(res)).toBe('NOT_FOUND');
      for (const name of CABINET_SUD_NAMES) expect(res.text).not.toContain(name);
    }
    expect(codeOf(await run(DELETE_TEMPLATE, { p: PRJ.archivedHouse, id: TPL.archivedHouseGrosOeuvre }))).toBe('CONFLICT');
    expect(await templateCount()).toBe(before);
  });
});

describe('Mutation.inviteContractors', () => {
  let templateId: string;
  beforeAll(async () => {
    templateId = (await addTemplate(TRD.residence['03'])).id;
  });

  it('creates directory entries and documents, reuses an entry by email, consumes one credit per document', async () => {
    const [before, contractors] = [await ledger(ORG.atelierDemo), await contractorCount()];
    const res = await run(INVITE, { p: PRJ.residence, t: templateId, c: [
      { name: 'Toitures Blanc', email: 'Contact@Toitures-Blanc.fr', phone: '04 78 00 11 22' },
      // Maçonnerie Petit et Fils is in Atelier Demo's directory: reused, its name unchanged.
      { name: 'Petit', email: 'DEVIS@maconnerie-petit.fr' },
    ] });
    expect(res.body.errors).toBeUndefined();
    const { created, documents, template: invitedTo } = res.body.data.inviteContractors;
    expect(created).toBe(2);
    // The template with its documents (in their order of creation, ties by id) and stats as they now are.
    expect(invitedTo).toEqual({ id: templateId, documents: documents.map((d: { id: string }) => ({ id: d.id })).sort((a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)), stats: { contractors: 2 } });
    expect(documents).toEqual([
      {
        id: expect.any(String), state: 'PENDING', intention: null, dceDownloadedAt: null, versions: [],
        contractor: { id: expect.any(String), name: 'Toitures Blanc', email: 'contact@toitures-blanc.fr', phone: '04 78 00 11 22', information: { fiscalNumber: null } },
      },
      {
        id: expect.any(String), state: 'PENDING', intention: null, dceDownloadedAt: null, versions: [],
        contractor: { id: CTR.maconneriePetit, name: 'Maçonnerie Petit et Fils', email: 'devis@maconnerie-petit.fr', phone: '04 74 61 22 85', information: { fiscalNumber: null } },
      },
    ]);
    expect(await contractorCount()).toBe(contractors + 1);

    const after = await ledger(ORG.atelierDemo);
    expect(after).toHaveLength(before.length + 2);
    const added = after.filter((e) => !before.some((b) => b.reference_id === e.reference_id));
    expect(added).toEqual(expect.arrayContaining([
      { amount: 1, kind: 'INVITATION', reference_id: documents[0].id },
      { amount: 1, kind: 'INVITATION', reference_id: documents[1].id },
    ]));

    const listed = await gql(t.url, architect, 'query($id: ID!) { project(id: $id) { templates { id consultationStartedAt stats { contractors contractorsPending } documents { id } } } }', { id: PRJ.residence });
    const template = listed.body.data.project.templates.find((x: { id: string }) => x.id === templateId);
    expect(template.consultationStartedAt).toMatch(TIMESTAMP);
    expect(template.stats).toEqual({ contractors: 2, contractorsPending: 2 });
    expect(template.documents.map((d: { id: string }) => d.id)).toEqual(expect.arrayContaining(documents.map((d: { id: string }) => d.id)));
  });

  it('creates nothing and consumes nothing for a repeated email; only the new one counts', async () => {
    const [ledgerBefore, documentsBefore] = [await ledgerCount(), await documentCount()];
    const again = await run(INVITE, { p: PRJ.residence, t: templateId, c: [{ name: 'Blanc', email: 'CONTACT@toitures-blanc.fr' }] });
    expect(again.body.data.inviteContractors.created).toBe(0);
    expect(again.body.data.inviteContractors.documents).toHaveLength(1);
    expect(again.body.data.inviteContractors.documents[0].contractor.name).toBe('Toitures Blanc');
    expect([await ledgerCount(), await documentCount()]).toEqual([ledgerBefore, documentsBefore]);

    const mixed = await run(INVITE, { p: PRJ.residence, t: templateId, c: [
      { name: 'Zinguerie Favre', email: 'zinc@favre.fr' }, { name: 'Blanc', email: 'contact@toitures-blanc.fr' },
    ] });
    expect(mixed.body.data.inviteContractors.created).toBe(1);
    expect(mixed.body.data.inviteContractors.documents.map((d: { contractor: { email: string } }) => d.contractor.email)).toEqual(['zinc@favre.fr', 'contact@toitures-blanc.fr']);
    expect([await ledgerCount(), await documentCount()]).toEqual([ledgerBefore + 1, documentsBefore + 1]);
  });

  it('answers BAD_USER_INPUT naming each failing field by its path, and writes nothing', async () => {
    const [ledgerBefore, contractors] = [await ledgerCount(), await contractorCount()];
    const bad = await run(INVITE, { p: PRJ.residence, t: templateId, c: [{ name: 'Nouveau', email: 'nouveau@example.fr' }, { name: '', email: 'not-an-email' }] });
    expect(failure(bad).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      errors: expect.arrayContaining([{ field: 'contractors.1.email', message: 'must be an email address' }, { field: 'contractors.1.name', message: expect.any(String) }]),
    });
    const first = await run(INVITE, { p: PRJ.residence, t: templateId, c: [{ name: 'A', email: 'nope' }] });
    expect(failure(first).extensions).toEqual({ code: 'BAD_USER_INPUT', errors: [{ field: 'contractors.0.email', message: 'must be an email address' }] });
    const empty = await run(INVITE, { p: PRJ.residence, t: templateId, c: [] });
    expect(failure(empty).extensions).toEqual({ code: 'BAD_USER_INPUT', errors: [{ field: 'contractors', message: 'must have at least 1 item' }] });
    expect([await ledgerCount(), await contractorCount()]).toEqual([ledgerBefore, contractors]);
  });

  it('answers NOT_FOUND for an unknown or another organization\'s template, CONFLICT below an archived project, consuming nothing', async () => {
    const [ledgerBefore, documentsBefore, contractors] = [await ledgerCount(), await documentCount(), await contractorCount()];
    const c = [{ name: 'Intrus', email: 'intrus@example.fr' }];
    expect(codeOf(await run(INVITE, { p: PRJ.residence, t: UNKNOWN, c }))).toBe('NOT_FOUND');
    for (const p of [PRJ.residence, PRJ.cabinetSudHall]) {
      const res = await run(INVITE, { p, t: TPL.cabinetSudCharpente, c });
      expect(codeOf(res)).toBe('NOT_FOUND');
      for (const name of CABINET_SUD_NAMES) expect(res.text).not.toContain(name);
    }
    expect(codeOf(await run(INVITE, { p: PRJ.archivedHouse, t: TPL.archivedHouseGrosOeuvre, c }))).toBe('CONFLICT');
    expect([await ledgerCount(), await documentCount(), await contractorCount()]).toEqual([ledgerBefore, documentsBefore, contractors]);
    expect(await count('select count(*) as n from credit_ledger_entry where organization_id = ?', [ORG.cabinetSud])).toBe(1);
  });
});

describe('authentication and authorization of mutations', () => {
  const writes: Array<[string, string, Record<string, unknown>]> = [
    ['createProjectTrade', CREATE_TRADE, { p: PRJ.residence, i: { name: 'Intrus', number: '99', shortName: 'IN' } }],
    ['updateProjectTrade', UPDATE_TRADE, { p: PRJ.residence, id: TRD.residence['07'], i: { name: 'Intrus', number: '07', shortName: 'IN' } }],
    ['deleteProjectTrade', DELETE_TRADE, { p: PRJ.residence, id: TRD.residence['08'] }],
    ['addTemplate', ADD_TEMPLATE, { p: PRJ.residence, i: { tradeId: TRD.residence['07'] } }],
    ['deleteTemplate', DELETE_TEMPLATE, { p: PRJ.residence, id: TPL.residenceGrosOeuvreTranche2 }],
    ['inviteContractors', INVITE, { p: PRJ.residence, t: TPL.residenceElectricite, c: [{ name: 'Intrus', email: 'intrus@example.fr' }] }],
  ];
  const snapshot = async () => [await tradeCount(), await templateCount(), await documentCount(), await ledgerCount(),
    (await tradesOf(PRJ.residence)).find((x) => x.id === TRD.residence['07'])!.name];

  it('answers 401 UNAUTHENTICATED before execution without a valid token, and writes nothing', async () => {
    const before = await snapshot();
    for (const [, query, variables] of writes) {
      for (const token of [undefined, 'not.a.jwt']) {
        const res = await gql(t.url, token, query, variables);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }] });
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers 403 FORBIDDEN before execution to a plain member and to a user without API access, and writes nothing', async () => {
    const before = await snapshot();
    for (const email of ['member@demo.test', 'noapi@demo.test']) {
      const token = await tokenFor(t.url, email);
      for (const [, query, variables] of writes) {
        const res = await run(query, variables, token);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'FORBIDDEN' } }] });
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers BAD_USER_INPUT naming each malformed id argument, never an internal error', async () => {
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      [DELETE_TEMPLATE, { p: 'residence', id: 'tpl-1' }, ['projectId', 'templateId']],
      [DELETE_TRADE, { p: PRJ.residence, id: '42' }, ['tradeId']],
      [CREATE_TRADE, { p: 'x', i: { name: 'A', number: '1', shortName: 'A' } }, ['projectId']],
      [INVITE, { p: PRJ.residence, t: 'nope', c: [{ name: 'A', email: 'a@example.fr' }] }, ['templateId']],
      ['mutation { archiveProject(id: "nope") { project { id } } }', {}, ['id']],
      ['mutation { switchOrganization(organizationId: "nope") { organization { id } } }', {}, ['organizationId']],
      ['{ project(id: "nope") { id } }', {}, ['id']],
      ['{ organization(id: "nope") { id } }', {}, ['id']],
    ];
    for (const [query, variables, fields] of cases) {
      const { code, errors } = failure(await run(query, variables)).extensions as { code: string; errors: Array<{ field: string }> };
      expect(code).toBe('BAD_USER_INPUT');
      expect([...errors].sort((a, b) => a.field.localeCompare(b.field))).toEqual(fields.map((field) => ({ field, message: 'must be a UUID' })));
    }
  });
});

describe('INTERNAL_SERVER_ERROR', () => {
  let broken: TestApp;
  beforeAll(async () => {
    broken = await startTestApp();
    // A real fault the service cannot foresee: the database lost a column it reads.
    await broken.orm.em.fork().getConnection().execute('alter table document_version rename column sub_total to sub_total_lost');
  });
  afterAll(() => broken.close());

  it('answers the request id and nothing internal: no stacktrace, no SQL, no database message', async () => {
    const token = await tokenFor(broken.url, 'architect@demo.test');
    const res = await gql(broken.url, token, 'query($id: ID!) { project(id: $id) { name templates { documents { versions { subTotal } } } } }', { id: PRJ.residence });
    expect(res.status).toBe(200);
    expect(res.body.data).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    const [error] = res.body.errors;
    expect(error).toEqual({
      message: 'Internal server error',
      locations: expect.any(Array),
      path: expect.any(Array),
      extensions: { code: 'INTERNAL_SERVER_ERROR', request_id: res.headers.get('x-request-id') },
    });
    expect(res.headers.get('x-request-id')).toBeTruthy();
    for (const leak of ['stacktrace', 'sub_total', 'document_version', 'does not exist', 'select ', '.ts:']) expect(res.text).not.toContain(leak);
    // The rest of the service still answers.
    const ok = await gql(broken.url, token, 'query($id: ID!) { project(id: $id) { name } }', { id: PRJ.residence });
    expect(ok.body.data.project.name).toMatch(/^Résidence/);
  });
});
