import { print } from 'graphql';
import { DashboardDocument } from '../examples/graphql/generated/graphql';
import { answerCost } from '../src/platform/graphql/cost';
import { DEMO_IDS } from '../src/seed/demo-ids';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request } from './support/http';
import { holdProjectWrites } from './support/project-lock';
import { createProject } from './support/tender-builder';

// What a GraphQL operation costs and who pays (docs/rate-limits.md, "GraphQL cost"); one caller's share of the turns
// (docs/faults.md, "Overload"). Issue 31: a hostile caller can neither spend more than its budget nor crowd out others.

const P = '/api/svc/v1';
const POINTS = 300;

/** The RateLimit item of one policy: its remaining points and seconds to reset. */
function item(header: string | null, policy: string): { r: number; t: number } | null {
  const found = (header ?? '').split(',').map((s) => s.trim()).find((s) => s.startsWith(`"${policy}";`));
  if (!found) return null;
  const r = /;r=(\d+)/.exec(found);
  const t = /;t=(\d+)/.exec(found);
  return { r: Number(r?.[1]), t: Number(t?.[1]) };
}

describe('extensions.cost: what each operation cost', () => {
  let t: TestApp;
  let architect: string;
  beforeAll(async () => {
    t = await startTestApp();
    architect = await tokenFor(t.url, 'architect@demo.test');
  });
  afterAll(() => t?.close());

  it('counts one per field, and a list\'s selection once per element its first (or ids) allows: requested before, actual values of the answer after', async () => {
    const me = await gql(t.url, architect, '{ me { id email } }');
    expect(me.body.extensions.cost).toEqual({ requested: 3, actual: 3, limit: 20000 });
    const page = await gql(t.url, architect, '{ projects(first: 2) { totalCount nodes { id templates { id } } } }');
    // projects 1 + 2 x (totalCount 1 + nodes 1 + id 1 + templates 1 + id 1); the answer: projects, totalCount, nodes, each
    // node's id and templates, each template's id.
    expect(page.body.extensions.cost.requested).toBe(1 + 2 * 5);
    expect(page.body.extensions.cost.actual).toBe(answerCost(page.body.data));
    const templates = page.body.data.projects.nodes.reduce((n: number, p: { templates: unknown[] }) => n + p.templates.length, 0);
    expect(page.body.extensions.cost.actual).toBe(3 + 2 * 2 + templates);
    const ids = Object.values(DEMO_IDS.projects);
    const statistics = await gql(t.url, architect, 'query($ids: [ID!]!) { projectsStatistics(ids: $ids) { answered declined } }', { ids });
    expect(statistics.body.extensions.cost.requested).toBe(1 + ids.length * 2);
  });

  it('costs `projects` without first at its default page of 100, with a null first too, and with a variable at its value', async () => {
    const cost = async (query: string, variables?: Record<string, unknown>) => (await gql(t.url, architect, query, variables)).body.extensions.cost.requested;
    expect(await cost('{ projects { nodes { id } } }')).toBe(1 + 100 * 2);
    expect(await cost('{ projects(first: null) { nodes { id } } }')).toBe(1 + 100 * 2);
    expect(await cost('query($n: Int) { projects(first: $n) { nodes { id } } }', { n: 7 })).toBe(1 + 7 * 2);
    expect(await cost('query($n: Int) { projects(first: $n) { nodes { id } } }', {})).toBe(1 + 100 * 2);
  });

  it('answers the front end\'s dashboard within the cost limit, at first: 50 and at the default page', async () => {
    for (const first of [50, null]) {
      const res = await gql(t.url, architect, print(DashboardDocument), { first });
      expect([first, res.status, res.body.errors]).toEqual([first, 200, undefined]);
      expect(res.body.extensions.cost.requested).toBeLessThanOrEqual(20000);
    }
  });
});

describe('a list\'s first, costed as its field reads it (issue 41)', () => {
  let t: TestApp;
  let architect: string;
  beforeAll(async () => {
    t = await startTestApp();
    architect = await tokenFor(t.url, 'architect@demo.test');
  });
  afterAll(() => t?.close());

  const NO_WEBHOOK = '00000000-0000-4000-8000-000000000000';
  // 10 x (1 + 500 x (1 + 3)) = 20,010: over the limit of 20,000 by itself.
  const OVER = Array.from({ length: 10 }, (_, i) => `p${i}: projects(first: 500) { nodes { id name archived } }`).join(' ');

  it('costs webhookAttempts below 1 as the page of 1 it answers, literal or variable: a negative first no longer lowers the cost', async () => {
    for (const [query, variables] of [
      [`{ webhookAttempts(webhookId: "${NO_WEBHOOK}", first: -1000000) { id } }`, undefined],
      ['query($n: Int!) { webhookAttempts(webhookId: "' + NO_WEBHOOK + '", first: $n) { id } }', { n: -1000000 }],
      [`{ webhookAttempts(webhookId: "${NO_WEBHOOK}", first: 0) { id } }`, undefined],
    ] as const) {
      const res = await gql(t.url, architect, query, variables);
      // The field runs (an unknown endpoint: NOT_FOUND) and is costed at its page of 1: 1 + 1 x 1.
      expect([res.body.errors?.[0]?.extensions.code, res.body.extensions.cost.requested]).toEqual(['NOT_FOUND', 2]);
    }
    const above = await gql(t.url, architect, `{ webhookAttempts(webhookId: "${NO_WEBHOOK}", first: 1000000) { id } }`);
    expect(above.body.extensions.cost.requested).toBe(1 + 100);
  });

  it('refuses a document over the cost limit whatever first below 1 it adds, literal or variable, before it runs', async () => {
    const alone = await gql(t.url, architect, `{ ${OVER} }`);
    expect([alone.status, alone.body.errors[0].extensions.code]).toEqual([400, 'COST_LIMIT']);
    expect(alone.body.errors[0].message).toMatch(/requested cost is 20010,/);
    for (const [query, variables] of [
      [`{ ${OVER} w: webhookAttempts(webhookId: "${NO_WEBHOOK}", first: -1000000) { id } }`, undefined],
      [`query($n: Int!) { ${OVER} w: webhookAttempts(webhookId: "${NO_WEBHOOK}", first: $n) { id } }`, { n: -1000000 }],
    ] as const) {
      const res = await gql(t.url, architect, query, variables);
      expect([res.status, res.body.data, res.body.errors[0].extensions.code]).toEqual([400, undefined, 'COST_LIMIT']);
      expect(res.body.errors[0].message).toMatch(/requested cost is 20012,/);
    }
  });

  it('refuses projects with first below 1, literal or variable, with the field\'s own BAD_USER_INPUT, before anything runs', async () => {
    for (const [query, variables] of [
      ['{ projects(first: -1000000) { totalCount } }', undefined],
      ['query($n: Int) { projects(first: $n) { totalCount } }', { n: -1000000 }],
      ['{ projects(first: 0) { totalCount } }', undefined],
      [`{ ${OVER.split(' p1:')[0]} bad: projects(first: -1000000) { totalCount } }`, undefined],
    ] as const) {
      const res = await gql(t.url, architect, query, variables);
      expect([res.status, res.body.data, res.body.extensions?.cost]).toEqual([400, undefined, undefined]);
      expect(res.body.errors).toEqual([{
        message: expect.any(String),
        extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'first', message: 'must be a whole number from 1 to 500' }] },
      }]);
    }
  });
});

describe('projects without first: a page of 100, not every project', () => {
  let t: TestApp;
  let architect: string;
  beforeAll(async () => {
    t = await startTestApp();
    architect = await tokenFor(t.url, 'architect@demo.test');
    // 101 projects of the caller's current organization besides the demo's.
    for (let i = 0; i < 101; i += 10) await Promise.all(Array.from({ length: Math.min(10, 101 - i) }, (_, k) => createProject(t, architect, `Page ${i + k}`)));
  });
  afterAll(() => t?.close());

  it('answers the first 100 with hasNextPage, then the rest after its endCursor', async () => {
    const query = 'query($after: String) { projects(after: $after) { totalCount nodes { id } pageInfo { hasNextPage endCursor } } }';
    const first = (await gql(t.url, architect, query)).body.data.projects;
    expect(first.nodes).toHaveLength(100);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await gql(t.url, architect, query, { after: first.pageInfo.endCursor })).body.data.projects;
    expect(rest.nodes.length).toBe(first.totalCount - 100);
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });

  it('leaves REST alone: GET /projects without limit answers every project, as interface.md says', async () => {
    const res = await request(t.url, 'GET', `${P}/projects`, { token: architect });
    const all = (await gql(t.url, architect, '{ projects(first: 500) { totalCount } }')).body.data.projects.totalCount;
    expect(res.body.projects.length).toBe(all);
    expect(all).toBeGreaterThan(100);
  });
});

describe('the graphql-cost budget of each caller', () => {
  let t: TestApp;
  let architect: string;
  let other: string;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_GRAPHQL_COST_POINTS: String(POINTS), RATE_LIMIT_GRAPHQL_COST_WINDOW_SECONDS: '600' });
    [architect, other] = await Promise.all([tokenFor(t.url, 'architect@demo.test'), tokenFor(t.url, 'other@demo.test')]);
  });
  afterAll(() => t?.close());

  const PAGE = '{ projects(first: 3) { nodes { id name archived } } }';

  it('charges each answer\'s actual cost and advertises what is left beside the request quota', async () => {
    const res = await gql(t.url, architect, PAGE);
    expect([res.status, res.text]).toEqual([200, expect.stringContaining('"cost"')]);
    const actual = res.body.extensions.cost.actual;
    expect(res.headers.get('ratelimit-policy')).toMatch(new RegExp(`"graphql-cost";q=${POINTS};w=600`));
    expect(item(res.headers.get('ratelimit'), 'graphql-cost')).toEqual({ r: POINTS - actual, t: expect.any(Number) });
    expect(item(res.headers.get('ratelimit'), 'api')).not.toBeNull();
    // REST is counted in requests only.
    const rest = await request(t.url, 'GET', `${P}/projects`, { token: architect });
    expect(item(rest.headers.get('ratelimit'), 'graphql-cost')).toBeNull();
    const again = await gql(t.url, architect, '{ me { id } }');
    expect(item(again.headers.get('ratelimit'), 'graphql-cost')!.r).toBe(POINTS - actual - 2);
  });

  it('refuses an operation whose requested cost is more than the budget has left, with 429 RATE_LIMITED, before it runs', async () => {
    // 1 + 500 x 2: more than the whole budget.
    const res = await gql(t.url, architect, '{ projects(first: 500) { nodes { id } } }');
    expect([res.status, res.body.data, res.body.errors[0].extensions.code]).toEqual([429, undefined, 'RATE_LIMITED']);
    expect(res.body.errors[0].message).toMatch(/requested cost is 1001, \d+ is left/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    // What is left, too little for it, and when the window resets.
    const left = Number(/(\d+) is left/.exec(res.body.errors[0].message)![1]);
    expect(left).toBeGreaterThan(0);
    expect(item(res.headers.get('ratelimit'), 'graphql-cost')).toEqual({ r: left, t: Number(res.headers.get('retry-after')) });
  });

  it('refuses as over the budget an operation that adds a first below 1 to one the budget cannot cover', async () => {
    const res = await gql(t.url, architect, '{ projects(first: 500) { nodes { id } } webhookAttempts(webhookId: "00000000-0000-4000-8000-000000000000", first: -1000) { id } }');
    expect([res.status, res.body.data, res.body.errors[0].extensions.code]).toEqual([429, undefined, 'RATE_LIMITED']);
    expect(res.body.errors[0].message).toMatch(/requested cost is 1003, \d+ is left/);
  });

  it('once spent, refuses the caller at the door with 429, its body unread, and serves another caller as before', async () => {
    // Spent down to nothing: each query until its requested cost is more than is left, then a cheaper one.
    for (const query of [PAGE, '{ me { id } }', '{ __typename }']) {
      for (let i = 0; i < 40; i++) {
        const res = await gql(t.url, architect, query);
        if (res.status === 429) break;
        expect(res.status).toBe(200);
      }
    }
    // Not JSON at all: refused for the budget before the body is parsed (400 otherwise).
    const unread = await request(t.url, 'POST', '/graphql', { token: architect, raw: '{ not json', headers: { 'Content-Type': 'application/json' } });
    expect([unread.status, unread.body.errors[0].extensions.code]).toEqual([429, 'RATE_LIMITED']);
    expect(unread.body.errors[0].message).toMatch(/none is left/);
    expect(item(unread.headers.get('ratelimit'), 'graphql-cost')!.r).toBe(0);
    const served = await gql(t.url, other, PAGE);
    expect([served.status, served.body.errors]).toEqual([200, undefined]);
  });
});

describe('one caller\'s share of the GraphQL turns', () => {
  let t: TestApp;
  let architect: string;
  let other: string;
  beforeAll(async () => {
    // Two write turns (mutations mostly wait on the database: they take the writes' turns): a caller's share is one.
    t = await startTestApp({
      REST_MAX_CONCURRENT_WRITES: '2', GRAPHQL_QUEUE_LENGTH_PER_CALLER: '2', DATABASE_LOCK_TIMEOUT_MS: '5000', GRAPHQL_QUEUE_TIMEOUT_MS: '10000',
    });
    [architect, other] = await Promise.all([tokenFor(t.url, 'architect@demo.test'), tokenFor(t.url, 'other@demo.test')]);
  });
  afterAll(() => t?.close());

  const CREATE = 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }';
  const trade = (token: string, project: string, n: number, timeoutMs = 20000) =>
    gql(t.url, token, CREATE, { p: project, i: { name: `Share ${n}`, number: String(70 + n), shortName: 'SH' } }, { timeoutMs });

  it('refuses at once, with 429 and Retry-After, a caller\'s requests beyond its share running and waiting, while another caller takes the free turn', async () => {
    const project = DEMO_IDS.projects.residence;
    const lock = await holdProjectWrites(t.databaseUrl, project);
    let held: Promise<{ status: number }>;
    let waiting: Array<Promise<{ status: number }>>;
    try {
      // The caller's one running mutation waits on the lock; two more wait for its turn.
      held = trade(architect, project, 1);
      await lock.waiter();
      waiting = [trade(architect, project, 2), trade(architect, project, 3)];
      await new Promise((r) => setTimeout(r, 200));
      const beyond = await Promise.all([4, 5, 6, 7, 8].map((n) => trade(architect, project, n)));
      for (const res of beyond) {
        expect([res.status, res.body.errors[0].extensions.code, res.headers.get('retry-after')]).toEqual([429, 'RATE_LIMITED', '1']);
        expect(res.body.errors[0].message).toMatch(/at most 1 run and 2 wait/);
      }
      // Another caller is not behind them: the second turn is its own, and its queries have turns of their own.
      const served = await trade(other, DEMO_IDS.projects.cabinetSudHall, 9, 3000);
      expect([served.status, served.body.errors]).toEqual([200, undefined]);
      const query = await gql(t.url, architect, '{ me { id } }', undefined, { timeoutMs: 3000 });
      expect([query.status, query.body.errors]).toEqual([200, undefined]);
    } finally {
      await lock.release();
    }
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual([200, 200]);
    expect((await held).status).toBe(200);
  });
});
