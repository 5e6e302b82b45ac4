import { DEMO_IDS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request } from './support/http';

let t: TestApp;
let architect: string;
let other: string;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

const CREATE = `mutation($input: CreateProjectInput!) { createProject(input: $input) { id name organizationId constructionType archived
  scopes { currency vat prorate levels } siteAddress { number zipCode } optionalDates { noc responsesOpeningDate }
  managers { id email } organization { id name } createdAt } }`;
const validInput = () => ({
  name: 'Médiathèque', constructionType: 'public_building', managers: [{ id: DEMO_IDS.users.architect }],
  tradeListId: DEMO_IDS.tradeLists.standard, responseType: 'DPGF', endOfOfferDate: '2027-03-01T00:00:00',
  scopes: { currency: 'EUR', vat: 20 }, siteAddress: { number: 4, zipCode: 69001 }, optionalDates: { noc: '2027-01-10' },
});

describe('authentication of /graphql', () => {
  it('answers 401 UNAUTHENTICATED before any field runs when there is no token', async () => {
    const res = await gql(t.url, undefined, '{ me { id } }');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="svc", error="invalid_token"');
    expect(res.body).toEqual({ errors: [{ message: 'Missing Authorization header', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('answers 403 FORBIDDEN for a user who is Administrator of no organization', async () => {
    const member = await tokenFor(t.url, 'member@demo.test');
    const res = await gql(t.url, member, '{ me { id } }');
    expect(res.status).toBe(403);
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('runs no mutation for a caller without a valid token', async () => {
    const res = await gql(t.url, 'not.a.jwt', CREATE, { input: validInput() });
    expect(res.status).toBe(401);
    const list = await request(t.url, 'GET', '/api/svc/v1/projects', { token: architect });
    expect(list.body.projects.map((p: { name: string }) => p.name)).not.toContain('Médiathèque');
  });
});

describe('Query.me', () => {
  it('gives the caller, the current organization and the Administrator organizations', async () => {
    const res = await gql(t.url, architect, '{ me { id email currentOrganization { name } organizations { name } } }');
    expect(res.body).toEqual({ data: { me: {
      id: DEMO_IDS.users.architect, email: 'architect@demo.test',
      currentOrganization: { name: 'Atelier Demo' }, organizations: [{ name: 'Atelier Demo' }, { name: 'Atelier Nord' }],
    } } });
  });
});

describe('Query.organizations and Query.organization', () => {
  it('lists only organizations where the caller is Administrator', async () => {
    const res = await gql(t.url, other, '{ organizations { id name information { fiscalNumber } users { id email isRegistered } createdAt } }');
    expect(res.body.data.organizations.map((o: { name: string }) => o.name)).toEqual(['Cabinet Sud']);
    expect(res.body.data.organizations[0].createdAt).toMatch(TIMESTAMP);
  });

  it('answers NOT_FOUND for another organization, never its data', async () => {
    const res = await gql(t.url, architect, `{ organization(id: "${DEMO_IDS.organizations.cabinetSud}") { id name } }`);
    expect(res.body.data).toBeNull();
    expect(res.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(res.text).not.toContain('Cabinet Sud');
  });
});

describe('Query.projects', () => {
  it('is a connection over the caller\'s live projects, newest first, with a total count', async () => {
    const res = await gql(t.url, architect, '{ projects { totalCount nodes { id archived organization { name } } edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }');
    const { projects } = res.body.data;
    expect(projects.totalCount).toBe(projects.nodes.length);
    expect(projects.nodes.every((p: { archived: boolean }) => !p.archived)).toBe(true);
    expect(projects.nodes.map((p: { id: string }) => p.id)).not.toContain(DEMO_IDS.projects.cabinetSudHall);
    expect(projects.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(projects.nodes.map((p: { id: string }) => p.id));
    expect(projects.pageInfo.hasNextPage).toBe(false);
  });

  it('pages with opaque cursors in a stable order', async () => {
    const all = (await gql(t.url, architect, '{ projects { nodes { id } } }')).body.data.projects.nodes.map((p: { id: string }) => p.id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const res = await gql(t.url, architect, 'query($after: String) { projects(first: 1, after: $after) { totalCount nodes { id } pageInfo { hasNextPage endCursor } } }', { after });
      const page = res.body.data.projects;
      expect(page.totalCount).toBe(all.length);
      seen.push(...page.nodes.map((p: { id: string }) => p.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(all);
  });

  it('lists only archived projects with archived: true', async () => {
    const res = await gql(t.url, architect, '{ projects(archived: true) { nodes { id archived archivedAt } } }');
    expect(res.body.data.projects.nodes.map((p: { id: string }) => p.id)).toEqual([DEMO_IDS.projects.archivedHouse]);
    expect(res.body.data.projects.nodes[0].archivedAt).toMatch(TIMESTAMP);
  });

  it('refuses a page size out of range and a forged cursor with BAD_USER_INPUT', async () => {
    for (const args of ['first: 0', 'first: 501', 'first: 1, after: "bm9wZQ"']) {
      const res = await gql(t.url, architect, `{ projects(${args}) { totalCount } }`);
      expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
  });
});

describe('Query.project', () => {
  it('answers the project with its fields in camelCase', async () => {
    const res = await gql(t.url, architect, `{ project(id: "${DEMO_IDS.projects.residence}") { id name organizationId tradeListId responseType constructionType archived createdAt updatedAt managers { id } } }`);
    expect(res.body.data.project).toMatchObject({ id: DEMO_IDS.projects.residence, organizationId: DEMO_IDS.organizations.atelierDemo, archived: false });
    expect(res.body.data.project.updatedAt).toMatch(TIMESTAMP);
  });

  it('answers NOT_FOUND for a project of another organization', async () => {
    const res = await gql(t.url, architect, `{ project(id: "${DEMO_IDS.projects.cabinetSudHall}") { id name } }`);
    expect(res.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(res.body.data).toBeNull();
  });
});

describe('Mutation.createProject', () => {
  it('creates the project in the current organization with the same rules as REST', async () => {
    const res = await gql(t.url, architect, CREATE, { input: validInput() });
    const project = res.body.data.createProject;
    expect(project).toMatchObject({
      name: 'Médiathèque', organizationId: DEMO_IDS.organizations.atelierDemo, archived: false,
      scopes: { currency: 'EUR', vat: 20, prorate: null, levels: null }, siteAddress: { number: 4, zipCode: 69001 },
      optionalDates: { noc: '2027-01-10', responsesOpeningDate: null },
      managers: [{ id: DEMO_IDS.users.architect, email: 'architect@demo.test' }], organization: { name: 'Atelier Demo' },
    });
    const rest = await request(t.url, 'GET', `/api/svc/v1/projects/${project.id}`, { token: architect });
    expect(rest.body.project.end_of_offer_date).toBe('2027-03-01');
  });

  it('answers BAD_USER_INPUT with every failing field, in camelCase', async () => {
    const res = await gql(t.url, architect, CREATE, { input: { ...validInput(), constructionType: 'castle', managers: [], scopes: { vat: 0, prorate: 101 }, siteAddress: { number: 0 }, endOfOfferDate: '2027-02-30' } });
    expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors[0].extensions.errors).toEqual(expect.arrayContaining([
      { field: 'constructionType', message: expect.stringContaining('must be one of') },
      { field: 'managers', message: 'must have at least 1 item' },
      { field: 'scopes.vat', message: 'must be at least 1' },
      { field: 'scopes.prorate', message: 'must be at most 100' },
      { field: 'siteAddress.number', message: 'must be at least 1' },
      { field: 'endOfOfferDate', message: expect.stringContaining('must be a valid date') },
    ]));
  });

  it('refuses a manager who is not a user of the organization', async () => {
    const res = await gql(t.url, architect, CREATE, { input: { ...validInput(), managers: [{ id: DEMO_IDS.users.other }] } });
    expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', errors: [{ field: 'managers.0.id', message: 'is not a user of the organization' }] });
  });
});

describe('Mutation.archiveProject', () => {
  it('archives, idempotently, and NOT_FOUND for another organization\'s project', async () => {
    const created = (await gql(t.url, architect, CREATE, { input: validInput() })).body.data.createProject;
    const first = await gql(t.url, architect, `mutation { archiveProject(id: "${created.id}") { archived archivedAt } }`);
    const second = await gql(t.url, architect, `mutation { archiveProject(id: "${created.id}") { archived archivedAt } }`);
    expect(first.body.data.archiveProject.archived).toBe(true);
    expect(second.body.data.archiveProject.archivedAt).toBe(first.body.data.archiveProject.archivedAt);
    const foreign = await gql(t.url, architect, `mutation { archiveProject(id: "${DEMO_IDS.projects.cabinetSudHall}") { id } }`);
    expect(foreign.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('Mutation.switchOrganization', () => {
  it('changes the current organization, and refuses one where the caller is not Administrator', async () => {
    const token = await tokenFor(t.url, 'architect@demo.test');
    const res = await gql(t.url, token, `mutation { switchOrganization(organizationId: "${DEMO_IDS.organizations.atelierNord}") { name } }`);
    expect(res.body.data.switchOrganization.name).toBe('Atelier Nord');
    expect((await gql(t.url, token, '{ me { currentOrganization { name } } }')).body.data.me.currentOrganization.name).toBe('Atelier Nord');
    const refused = await gql(t.url, token, `mutation { switchOrganization(organizationId: "${DEMO_IDS.organizations.cabinetSud}") { name } }`);
    expect(refused.body.errors[0].extensions.code).toBe('NOT_FOUND');
    await gql(t.url, token, `mutation { switchOrganization(organizationId: "${DEMO_IDS.organizations.atelierDemo}") { name } }`);
  });
});

describe('query limits', () => {
  it('refuses more than 15 aliases with BAD_USER_INPUT, and lets a normal query through', async () => {
    const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: me { id }`).join(' ');
    const many = await gql(t.url, architect, `{ ${aliases} }`);
    expect(many.status).toBe(400);
    expect(many.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const deep = `{ me { organizations { users { id } } currentOrganization { users { id } } } }`;
    expect((await gql(t.url, architect, deep)).status).toBe(200);
  });
});
