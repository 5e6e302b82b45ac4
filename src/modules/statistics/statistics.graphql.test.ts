import { toRest } from '../../platform/rest/serialize';
import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { gql } from '../../../test/support/graphql';
import { request } from '../../../test/support/http';

let t: TestApp;
let architect: string;

const STATS = `answered mayAnswer declined contractors tenderDocuments budgets { total simulatedCost totalAnticipatedTrades
  totalAnticipatedOffers budgetTradesToAssign { value percent } projectDeviation { value percent } }`;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

describe('Query.projectsStatistics', () => {
  it('answers one statistics object per id, in order, null for ids the caller may not see', async () => {
    const ids = [DEMO_IDS.projects.school, DEMO_IDS.projects.cabinetSudHall, DEMO_IDS.projects.residence, '00000000-0000-4000-8000-000000000000'];
    const res = await gql(t.url, architect, `query($ids: [ID!]!) { projectsStatistics(ids: $ids) { projectId ${STATS} } }`, { ids });
    const rows = res.body.data.projectsStatistics;
    expect(rows.map((r: { projectId: string } | null) => r?.projectId ?? null)).toEqual([DEMO_IDS.projects.school, null, DEMO_IDS.projects.residence, null]);
    expect(rows[2]).toMatchObject({ contractors: 9, answered: 6, declined: 2, mayAnswer: 6, tenderDocuments: 10 });
    expect(rows[2].budgets).toEqual({
      total: 355500.5, simulatedCost: 356799.5, totalAnticipatedTrades: 278500.5, totalAnticipatedOffers: 279799.5,
      budgetTradesToAssign: { value: 77000, percent: 21.66 }, projectDeviation: { value: 1299, percent: 0.37 },
    });
  });

  it('equals REST #5 for every demo project', async () => {
    const ids = [DEMO_IDS.projects.residence, DEMO_IDS.projects.school, DEMO_IDS.projects.archivedHouse, DEMO_IDS.projects.nordOffices];
    const res = await gql(t.url, architect, `query($ids: [ID!]!) { projectsStatistics(ids: $ids) { ${STATS} } }`, { ids });
    for (const [i, id] of ids.entries()) {
      const rest = await request(t.url, 'GET', `/api/svc/v1/projects/${id}/statistics`, { token: architect });
      expect(toRest(res.body.data.projectsStatistics[i])).toEqual(rest.body.project.statistics);
    }
  });

  it('runs the same number of SQL statements for 1 and for 4 projects', async () => {
    const query = `query($ids: [ID!]!) { projectsStatistics(ids: $ids) { ${STATS} } }`;
    const one = await t.queries.measure(() => gql(t.url, architect, query, { ids: [DEMO_IDS.projects.residence] }));
    const four = await t.queries.measure(() => gql(t.url, architect, query, {
      ids: [DEMO_IDS.projects.residence, DEMO_IDS.projects.school, DEMO_IDS.projects.archivedHouse, DEMO_IDS.projects.nordOffices],
    }));
    expect(four.statements).toBe(one.statements);
  });

  it('answers INTERNAL_SERVER_ERROR when the statistics cannot be computed, never null as for a project the caller may not see', async () => {
    const connection = t.orm.em.fork().getConnection();
    // A fault the service cannot foresee: the database lost a column the statistics read.
    await connection.execute('alter table project_statistics rename column total_cents to total_cents_lost');
    try {
      const res = await gql(t.url, architect, `query($ids: [ID!]!) { projectsStatistics(ids: $ids) { answered } }`, { ids: [DEMO_IDS.projects.residence] });
      expect(res.body.data).toBeNull();
      expect(res.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['INTERNAL_SERVER_ERROR']);
    } finally {
      await connection.execute('alter table project_statistics rename column total_cents_lost to total_cents');
    }
  });
});

describe('ProjectStatistics.id', () => {
  it('is "<projectId>:statistics", the same object from projectsStatistics and from Project.statistics, whatever the case of the id asked for', async () => {
    const id = DEMO_IDS.projects.residence;
    const res = await gql(t.url, architect, `query($ids: [ID!]!, $id: ID!) { projectsStatistics(ids: $ids) { id projectId ${STATS} } project(id: $id) { statistics { id projectId ${STATS} } } }`,
      { ids: [id, id.toUpperCase()], id: id.toUpperCase() });
    const [lower, upper] = res.body.data.projectsStatistics;
    expect(lower).toMatchObject({ id: `${id}:statistics`, projectId: id });
    expect(upper).toEqual(lower);
    expect(res.body.data.project.statistics).toEqual(lower);
  });
});

describe('Project.statistics', () => {
  it('resolves the statistics of each listed project through one batched statement', async () => {
    const res = await gql(t.url, architect, `{ projects { nodes { id statistics { projectId answered budgets { total } } } } }`);
    const residence = res.body.data.projects.nodes.find((p: { id: string }) => p.id === DEMO_IDS.projects.residence);
    expect(residence.statistics).toEqual({ projectId: DEMO_IDS.projects.residence, answered: 6, budgets: { total: 355500.5 } });
  });
});
