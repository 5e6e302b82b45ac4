import { DEMO_IDS, DEMO_USERS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const ORGS = '/api/svc/v1/organizations';
const names = (body: { organizations: { name: string }[] }) => body.organizations.map((o) => o.name);

let t: TestApp;
beforeAll(async () => {
  // Rights read at every request: these cases change a flag in SQL and call at once, which a kept caller would
  // answer until the change's message reaches the instance, a few milliseconds later on a busy machine (the caller
  // cache's own rules are test/auth.caller-cache.test.ts's).
  t = await startTestApp({ AUTH_CALLER_CACHE_TTL_MS: '0' });
});
afterAll(() => t.close());

const sql = (query: string, params: unknown[] = []) => t.orm.em.fork().getConnection().execute(query, params);

describe('Authorization: the demo accounts of decisions.md section 3', () => {
  it('architect@demo.test: 200, sees Atelier Demo and Atelier Nord only', async () => {
    const res = await request(t.url, 'GET', ORGS, { token: await tokenFor(t.url, DEMO_USERS.architect) });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Atelier Demo', 'Atelier Nord']);
  });

  it('other@demo.test: 200, sees Cabinet Sud only', async () => {
    const res = await request(t.url, 'GET', ORGS, { token: await tokenFor(t.url, DEMO_USERS.other) });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Cabinet Sud']);
  });

  it('member@demo.test (Administrator of no organization): 403', async () => {
    const res = await request(t.url, 'GET', ORGS, { token: await tokenFor(t.url, DEMO_USERS.member) });
    expect([res.status, res.body]).toEqual([403, { code: 403, message: 'The user is Administrator of no organization' }]);
  });

  it('noapi@demo.test (API not activated for the user): 403', async () => {
    const res = await request(t.url, 'GET', ORGS, { token: await tokenFor(t.url, DEMO_USERS.noapi) });
    expect([res.status, res.body]).toEqual([403, { code: 403, message: 'The API is not activated for this user' }]);
  });

  it('the refusals hold on GraphQL too', async () => {
    const res = await request(t.url, 'POST', '/graphql', { token: await tokenFor(t.url, DEMO_USERS.member), body: { query: '{ __typename }' } });
    expect(res.status).toBe(403);
  });
});

describe('Authorization: API access and activation', () => {
  // Each case changes a flag on the test's own database copy and restores it.
  async function withFlag(update: string, restore: string, params: unknown[], run: () => Promise<void>) {
    await sql(update, params);
    try {
      await run();
    } finally {
      await sql(restore, params);
    }
  }

  it('403 when API access was never granted to the user', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.other);
    await withFlag('update app_user set api_access_granted = false where id = ?', 'update app_user set api_access_granted = true where id = ?',
      [DEMO_IDS.users.other], async () => {
        const res = await request(t.url, 'GET', ORGS, { token });
        expect([res.status, res.body]).toEqual([403, { code: 403, message: 'API access has not been granted to this user' }]);
      });
    expect((await request(t.url, 'GET', ORGS, { token })).status).toBe(200);
  });

  it('403 when the API is not activated for the only organization', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.other);
    await withFlag('update organization set api_enabled = false where id = ?', 'update organization set api_enabled = true where id = ?',
      [DEMO_IDS.organizations.cabinetSud], async () => {
        const res = await request(t.url, 'GET', ORGS, { token });
        expect([res.status, res.body]).toEqual([403, { code: 403, message: 'The API is not activated for the organizations of this user' }]);
      });
  });

  it('an organization whose API is not activated drops out of what the caller sees', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.architect);
    await withFlag('update organization set api_enabled = false where id = ?', 'update organization set api_enabled = true where id = ?',
      [DEMO_IDS.organizations.atelierNord], async () => {
        const res = await request(t.url, 'GET', ORGS, { token });
        expect([res.status, names(res.body)]).toEqual([200, ['Atelier Demo']]);
        const hidden = await request(t.url, 'GET', `${ORGS}/${DEMO_IDS.organizations.atelierNord}`, { token });
        expect(hidden.status).toBe(404);
      });
  });

  it('the rights are read at every request: losing Administrator takes effect on the next call, same token', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.other);
    await withFlag(`update membership set role = 'MEMBER' where user_id = ?`, `update membership set role = 'ADMINISTRATOR' where user_id = ?`,
      [DEMO_IDS.users.other], async () => {
        expect((await request(t.url, 'GET', ORGS, { token })).status).toBe(403);
      });
    expect((await request(t.url, 'GET', ORGS, { token })).status).toBe(200);
  });

  it('the caller context costs one SQL statement per request', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.member);
    const { statements } = await t.queries.measure(() => request(t.url, 'GET', ORGS, { token }));
    expect(statements).toBe(1);
  });
});

describe('Authorization: an id the caller may not see answers like an unknown id (404)', () => {
  it('another organization (GET /organizations/{organizationId})', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.architect);
    const hidden = await request(t.url, 'GET', `${ORGS}/${DEMO_IDS.organizations.cabinetSud}`, { token });
    const unknown = await request(t.url, 'GET', `${ORGS}/0f0f0f0f-0000-4000-8000-000000000000`, { token });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(unknown.body);
    expect(hidden.text).not.toContain('Cabinet Sud');
  });

  it('another organization\'s project (GET /projects/{projectId})', async () => {
    const token = await tokenFor(t.url, DEMO_USERS.architect);
    const hidden = await request(t.url, 'GET', `/api/svc/v1/projects/${DEMO_IDS.projects.cabinetSudHall}`, { token });
    const unknown = await request(t.url, 'GET', '/api/svc/v1/projects/0f0f0f0f-0000-4000-8000-000000000000', { token });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(unknown.body);
    // Its owner sees it.
    const own = await request(t.url, 'GET', `/api/svc/v1/projects/${DEMO_IDS.projects.cabinetSudHall}`, { token: await tokenFor(t.url, DEMO_USERS.other) });
    expect(own.status).toBe(200);
  });
});
