import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { answered, gql } from '../../../test/support/graphql';
import { request } from '../../../test/support/http';

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

const CREATE = `mutation($input: CreateProjectInput!) { createProject(input: $input) { project { id name organizationId constructionType archived
  scopes { currency vat prorate levels } siteAddress { number zipCode } optionalDates { noc responsesOpeningDate }
  managers { id email } organization { id name } createdAt } } }`;
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
    expect(res.body).toEqual(answered({ me: {
      id: DEMO_IDS.users.architect, email: 'architect@demo.test',
      currentOrganization: { name: 'Atelier Demo' }, organizations: [{ name: 'Atelier Demo' }, { name: 'Atelier Nord' }],
    } }));
  });

  it('is the caller\'s User record: the same fields as the user in an organization\'s users and a project\'s managers', async () => {
    const USER = 'id firstName lastName email phone mobile isRegistered currentOrganizationId organizationIds';
    const res = await gql(t.url, architect, `query($p: ID!) { me { ${USER} } organizations { users { ${USER} } } project(id: $p) { managers { ${USER} } } }`, { p: DEMO_IDS.projects.residence });
    const { me, organizations, project } = res.body.data;
    expect(me).toMatchObject({
      id: DEMO_IDS.users.architect, email: 'architect@demo.test', isRegistered: true,
      currentOrganizationId: DEMO_IDS.organizations.atelierDemo, organizationIds: [DEMO_IDS.organizations.atelierDemo, DEMO_IDS.organizations.atelierNord],
    });
    expect(typeof me.firstName).toBe('string');
    const users = organizations.flatMap((o: { users: unknown[] }) => o.users) as Array<{ id: string }>;
    // Wherever the caller appears, the record is the same, caller-only fields included.
    for (const user of [...users, ...project.managers].filter((u) => u.id === me.id)) expect(user).toEqual(me);
    expect(project.managers).toContainEqual(me);
    // Caller-only fields are null on anyone else.
    const others = users.filter((u) => u.id !== me.id);
    expect(others.length).toBeGreaterThan(0);
    for (const user of others) expect(user).toMatchObject({ currentOrganizationId: null, organizationIds: null });
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
    const res = await gql(t.url, architect, '{ projects { totalCount nodes { id archived organization { name } } edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }');
    const { projects } = res.body.data;
    expect(projects.totalCount).toBe(projects.nodes.length);
    expect(projects.nodes.every((p: { archived: boolean }) => !p.archived)).toBe(true);
    expect(projects.nodes.map((p: { id: string }) => p.id)).not.toContain(DEMO_IDS.projects.cabinetSudHall);
    expect(projects.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(projects.nodes.map((p: { id: string }) => p.id));
    expect(projects.pageInfo).toEqual({
      hasNextPage: false, hasPreviousPage: false, startCursor: projects.edges[0].cursor, endCursor: projects.edges[projects.edges.length - 1].cursor,
    });
  });

  it('pages with opaque cursors in a stable order', async () => {
    const all = (await gql(t.url, architect, '{ projects { nodes { id } } }')).body.data.projects.nodes.map((p: { id: string }) => p.id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const res = await gql(t.url, architect, 'query($after: String) { projects(first: 1, after: $after) { totalCount nodes { id } edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }', { after });
      const page = res.body.data.projects;
      expect(page.totalCount).toBe(all.length);
      // Relay's PageInfo: a page asked for after a cursor has one before it; its cursors are its edges'.
      expect(page.pageInfo).toMatchObject({ hasPreviousPage: after !== null, startCursor: page.edges[0].cursor, endCursor: page.edges[0].cursor });
      seen.push(...page.nodes.map((p: { id: string }) => p.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(all);
  });

  it('counts the whole list only when the operation selects totalCount, in a fragment too', async () => {
    const counts = (sql: string[]) => sql.filter((q) => /\bcount\(/i.test(q)).length;
    const all = (await gql(t.url, architect, '{ projects { nodes { id } } }')).body.data.projects.nodes;
    const without = await t.queries.measure(() => gql(t.url, architect, '{ projects(first: 1) { nodes { id } pageInfo { hasNextPage } } }'));
    const selected = await t.queries.measure(() => gql(t.url, architect, '{ projects(first: 1) { totalCount nodes { id } } }'));
    const inFragment = await t.queries.measure(() => gql(t.url, architect,
      'query { projects(first: 1) { ...Total nodes { id } } } fragment Total on ProjectConnection { totalCount }'));
    expect(all.length).toBeGreaterThan(1);
    expect(without.result.body.data.projects).toEqual({ nodes: [all[0]], pageInfo: { hasNextPage: true } });
    expect(counts(without.sql)).toBe(0);
    expect(selected.result.body.data.projects).toEqual({ totalCount: all.length, nodes: [all[0]] });
    expect(counts(selected.sql)).toBe(1);
    expect(inFragment.result.body.data.projects).toEqual({ totalCount: all.length, nodes: [all[0]] });
    expect(counts(inFragment.sql)).toBe(1);
    expect(without.statements).toBe(selected.statements - 1);
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
    const { project } = res.body.data.createProject;
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
    const res = await gql(t.url, architect, CREATE, { input: { ...validInput(), managers: [], scopes: { vat: 0, prorate: 101 }, siteAddress: { number: 0 }, endOfOfferDate: '2027-02-30' } });
    expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors[0].extensions.errors).toEqual(expect.arrayContaining([
      { field: 'managers', message: 'must have at least 1 item' },
      { field: 'scopes.vat', message: 'must be at least 1' },
      { field: 'scopes.prorate', message: 'must be at most 100' },
      { field: 'siteAddress.number', message: 'must be at least 1' },
      { field: 'endOfOfferDate', message: expect.stringContaining('must be a valid date') },
    ]));
  });

  it('refuses a value outside a closed set (enums: constructionType, responseType, scopes.currency) with 400 BAD_USER_INPUT naming it, before anything runs', async () => {
    const count = async () => (await request(t.url, 'GET', '/api/svc/v1/projects', { token: architect })).body.projects.length;
    const before = await count();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ constructionType: 'castle' }, 'input.constructionType', 'ConstructionType'],
      [{ constructionType: 'OFFICE' }, 'input.constructionType', 'ConstructionType'],
      [{ responseType: 'dpgf' }, 'input.responseType', 'ResponseType'],
      [{ scopes: { currency: 'XXX', vat: 20 } }, 'input.scopes.currency', 'Currency'],
    ];
    for (const [change, path, enumName] of cases) {
      const res = await gql(t.url, architect, CREATE, { input: { ...validInput(), ...change } });
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT' });
      expect(res.body.errors[0].message).toContain(`"${path}"`);
      expect(res.body.errors[0].message).toContain(`"${enumName}" enum`);
    }
    // Written in the query itself, the value is refused by validation, likewise.
    const literal = await gql(t.url, architect, `mutation { createProject(input: { name: "X", constructionType: castle, managers: [{ id: "${DEMO_IDS.users.architect}" }],
      tradeListId: "${DEMO_IDS.tradeLists.standard}", responseType: DPGF }) { project { id } } }`);
    expect([literal.status, literal.body.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(await count()).toBe(before);
  });

  it('answers the closed sets as enum values, the same words as REST', async () => {
    const res = await gql(t.url, architect, `{ project(id: "${DEMO_IDS.projects.residence}") { constructionType responseType scopes { currency }
      templates { responseType documents { state intention versions { status } } } } }`);
    const rest = await request(t.url, 'GET', `/api/svc/v1/projects/${DEMO_IDS.projects.residence}`, { token: architect });
    const { project } = res.body.data;
    expect([project.constructionType, project.responseType, project.scopes?.currency ?? null])
      .toEqual([rest.body.project.construction_type, rest.body.project.response_type, rest.body.project.scopes?.currency ?? null]);
    const types = await gql(t.url, architect, `{ __schema { types { name kind enumValues { name } } } }`);
    const enums = Object.fromEntries(types.body.data.__schema.types.filter((x: { kind: string; name: string }) => x.kind === 'ENUM' && !x.name.startsWith('__'))
      .map((x: { name: string; enumValues: Array<{ name: string }> }) => [x.name, x.enumValues.map((v) => v.name)]));
    expect(enums).toEqual({
      ConstructionType: ['collective_building', 'extension', 'health_building', 'mall', 'office', 'other', 'public_building', 'public_space', 'single_flat', 'warehouse'],
      ResponseType: ['DPGF', 'DPGF_QUOTE', 'QUOTE'],
      Currency: ['CHF', 'DZD', 'EUR', 'GBP', 'MAD', 'TND', 'USD'],
      DocumentState: ['PENDING', 'ANSWERED', 'IN_REVISION', 'DECLINED'],
      VersionStatus: ['DRAFT', 'ANSWERED', 'IN_REVISION', 'DECLINED'],
      Intention: ['YES', 'NO', 'MAYBE'],
      CreditsScopeType: ['organization', 'headquarter'],
      ChangeKind: ['PROJECT', 'TRADE', 'TEMPLATE', 'DOCUMENT', 'VERSION', 'INTERRUPTED', 'RESUMED', 'RESYNC'],
    });
    const states = new Set(project.templates.flatMap((x: { documents: Array<{ state: string }> }) => x.documents.map((d) => d.state)));
    expect([...states].every((x) => enums.DocumentState.includes(x))).toBe(true);
    expect(states.size).toBeGreaterThan(1);
  });

  it('refuses a manager who is not a user of the organization', async () => {
    const res = await gql(t.url, architect, CREATE, { input: { ...validInput(), managers: [{ id: DEMO_IDS.users.other }] } });
    expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', errors: [{ field: 'managers.0.id', message: 'is not a user of the organization' }] });
  });
});

describe('Mutation.archiveProject', () => {
  it('archives, idempotently, and NOT_FOUND for another organization\'s project', async () => {
    const created = (await gql(t.url, architect, CREATE, { input: validInput() })).body.data.createProject;
    const first = await gql(t.url, architect, `mutation { archiveProject(id: "${created.project.id}") { project { id archived archivedAt } } }`);
    const second = await gql(t.url, architect, `mutation { archiveProject(id: "${created.project.id}") { project { id archived archivedAt } } }`);
    expect(first.body.data.archiveProject.project).toMatchObject({ id: created.project.id, archived: true });
    expect(second.body.data.archiveProject.project.archivedAt).toBe(first.body.data.archiveProject.project.archivedAt);
    const foreign = await gql(t.url, architect, `mutation { archiveProject(id: "${DEMO_IDS.projects.cabinetSudHall}") { project { id } } }`);
    expect(foreign.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('Mutation.switchOrganization', () => {
  it('changes the current organization, and refuses one where the caller is not Administrator', async () => {
    const token = await tokenFor(t.url, 'architect@demo.test');
    const SWITCH = 'mutation($o: ID!) { switchOrganization(organizationId: $o) { organization { name } me { id currentOrganizationId currentOrganization { name } } } }';
    const res = await gql(t.url, token, SWITCH, { o: DEMO_IDS.organizations.atelierNord });
    // The organization, and the caller's record as it now is.
    expect(res.body.data.switchOrganization).toEqual({ organization: { name: 'Atelier Nord' }, me: {
      id: DEMO_IDS.users.architect, currentOrganizationId: DEMO_IDS.organizations.atelierNord, currentOrganization: { name: 'Atelier Nord' },
    } });
    expect((await gql(t.url, token, '{ me { currentOrganization { name } } }')).body.data.me.currentOrganization.name).toBe('Atelier Nord');
    const refused = await gql(t.url, token, SWITCH, { o: DEMO_IDS.organizations.cabinetSud });
    expect(refused.body.errors[0].extensions.code).toBe('NOT_FOUND');
    await gql(t.url, token, SWITCH, { o: DEMO_IDS.organizations.atelierDemo });
  });
});

describe('query limits', () => {
  it('refuses more than 15 aliases with ALIAS_LIMIT, and lets a normal query through', async () => {
    const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: me { id }`).join(' ');
    const many = await gql(t.url, architect, `{ ${aliases} }`);
    expect(many.status).toBe(400);
    expect(many.body.errors[0].extensions.code).toBe('ALIAS_LIMIT');
    const deep = `{ me { organizations { users { id } } currentOrganization { users { id } } } }`;
    expect((await gql(t.url, architect, deep)).status).toBe(200);
  });
});
