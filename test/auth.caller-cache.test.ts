import type { Caller } from '../src/platform/auth/caller';
import { ChangeListener, type ChangeListenerOptions } from '../src/platform/events/change-listener';
import { CallerCache } from '../src/platform/auth/caller-cache';
import { DEMO_IDS } from '../src/seed/demo-data';
import { QueryCounter, startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { gql } from './support/graphql';
import { request } from './support/http';

const USER = '0b6f2f38-2d47-4a43-9a55-2d7d1c1c0001';
const callerOf = (organizations: string[]): Caller => ({
  userId: USER, email: 'a@b.test', adminOrganizationIds: organizations, currentOrganizationId: organizations[0], adminHeadquarterIds: [],
});

describe('CallerCache', () => {
  it('keeps a caller only while the instance listens for authorization changes', async () => {
    const cache = new CallerCache(60000);
    const lookUp = jest.fn(async () => callerOf(['o1']));
    await cache.get(USER, lookUp);
    await cache.get(USER, lookUp);
    expect(lookUp).toHaveBeenCalledTimes(2);

    cache.setListening(true);
    await cache.get(USER, lookUp);
    await cache.get(USER.toUpperCase(), lookUp);
    expect(lookUp).toHaveBeenCalledTimes(3);

    cache.setListening(false);
    await cache.get(USER, lookUp);
    expect(lookUp).toHaveBeenCalledTimes(4);
  });

  it('forgets a user on their notification, and everyone on `*`', async () => {
    const cache = new CallerCache(60000);
    cache.setListening(true);
    const lookUp = jest.fn(async () => callerOf(['o1']));
    await cache.get(USER, lookUp);
    cache.forget('some-other-user');
    await cache.get(USER, lookUp);
    expect(lookUp).toHaveBeenCalledTimes(1);
    cache.forget(USER.toUpperCase());
    await cache.get(USER, lookUp);
    expect(lookUp).toHaveBeenCalledTimes(2);
    cache.forget('*');
    await cache.get(USER, lookUp);
    expect(lookUp).toHaveBeenCalledTimes(3);
  });

  it('does not keep a lookup that a notification overtook: it may have read the rights before the change', async () => {
    const cache = new CallerCache(60000);
    cache.setListening(true);
    let finish!: (c: Caller) => void;
    const stale = cache.get(USER, () => new Promise<Caller>((resolve) => { finish = resolve; }));
    cache.forget(USER);
    finish(callerOf(['o1', 'removed-since']));
    expect((await stale).adminOrganizationIds).toEqual(['o1', 'removed-since']);
    const fresh = await cache.get(USER, async () => callerOf(['o1']));
    expect(fresh.adminOrganizationIds).toEqual(['o1']);
  });

  it('gives each request its own copy, which the request may change', async () => {
    const cache = new CallerCache(60000);
    cache.setListening(true);
    await cache.get(USER, async () => callerOf(['o1', 'o2']));
    const first = await cache.get(USER, async () => callerOf(['o1', 'o2']));
    first.currentOrganizationId = 'o2';
    expect((await cache.get(USER, async () => callerOf(['o1', 'o2']))).currentOrganizationId).toBe('o1');
  });

  it('gives each request its own organizations and headquarters: a request changing them changes no other request', async () => {
    const cache = new CallerCache(60000);
    cache.setListening(true);
    const lookUp = async () => ({ ...callerOf(['o1', 'o2']), adminHeadquarterIds: ['h1'] });
    const looked = await cache.get(USER, lookUp);
    looked.adminOrganizationIds.push('looked-up-request');
    const first = await cache.get(USER, lookUp);
    first.adminOrganizationIds.push('first-request');
    first.adminHeadquarterIds.push('first-request');
    const second = await cache.get(USER, lookUp);
    expect({ organizations: second.adminOrganizationIds, headquarters: second.adminHeadquarterIds }).toEqual({ organizations: ['o1', 'o2'], headquarters: ['h1'] });
  });

  it('keeps nothing with a time to live of 0 (AUTH_CALLER_CACHE_TTL_MS=0)', async () => {
    const cache = new CallerCache(0);
    cache.setListening(true);
    const lookUp = jest.fn(async () => callerOf(['o1']));
    await cache.get(USER, lookUp);
    await cache.get(USER, lookUp);
    expect(lookUp).toHaveBeenCalledTimes(2);
  });
});

describe('callers kept between requests, over REST and GraphQL', () => {
  let t: TestApp;
  let token: string;
  let counter: QueryCounter;
  const project = DEMO_IDS.projects.residence;
  beforeAll(async () => {
    t = await startTestApp();
    counter = new QueryCounter(t.orm);
    token = await tokenFor(t.url, 'architect@demo.test');
  });
  afterAll(() => t?.close());

  it('looks the caller up once for a burst of requests with one token', async () => {
    expect((await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token })).status).toBe(200);
    const { sql } = await counter.measure(async () => {
      expect((await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token })).status).toBe(200);
      expect((await gql(t.url, token, '{ me { id } }')).status).toBe(200);
    });
    // The rights lookup (loadCallers) by the column only it selects.
    expect(sql.filter((s) => s.includes('as active_admin_orgs'))).toEqual([]);
  });

  it('refuses a caller as soon as their Administrator role is removed, whoever removes it', async () => {
    expect((await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token })).status).toBe(200);
    const [{ organization_id: organization }] = await queryRows<{ organization_id: string }>(t.databaseUrl, 'select organization_id from project where id = $1', [project]);
    // As the main application or an operator would: straight in the database, not through this service.
    await queryRows(t.databaseUrl, `update membership set role = 'MEMBER' where organization_id = $1 and user_id = (select id from app_user where email = 'architect@demo.test')`, [organization]);
    try {
      // The notification arrives a few milliseconds after the commit; a kept caller would be answered 200 for a minute.
      const deadline = Date.now() + 2000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        status = (await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token })).status;
      }
      expect(status).toBe(404);
      const answer = await gql(t.url, token, 'query($id: ID!) { project(id: $id) { id } }', { id: project });
      expect(answer.body.errors[0].extensions.code).toBe('NOT_FOUND');
    } finally {
      await queryRows(t.databaseUrl, `update membership set role = 'ADMINISTRATOR' where organization_id = $1 and user_id = (select id from app_user where email = 'architect@demo.test')`, [organization]);
    }
    const deadline = Date.now() + 2000;
    let status = 404;
    while (status !== 200 && Date.now() < deadline) status = (await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token })).status;
    expect(status).toBe(200);
  });

  it('refuses a caller whose organization has its API deactivated', async () => {
    await queryRows(t.databaseUrl, `update organization set api_enabled = false where id in (select organization_id from membership m join app_user u on u.id = m.user_id where u.email = 'architect@demo.test')`);
    try {
      const deadline = Date.now() + 2000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) status = (await request(t.url, 'GET', '/api/svc/v1/projects', { token })).status;
      expect(status).toBe(403);
    } finally {
      await queryRows(t.databaseUrl, `update organization set api_enabled = true where id in (select organization_id from membership m join app_user u on u.id = m.user_id where u.email = 'architect@demo.test')`);
    }
  });
  // Last: it empties the memberships of this describe's own database.
  it('refuses a kept caller once the memberships are truncated (a TRUNCATE fires no row trigger)', async () => {
    expect((await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token })).status).toBe(200);
    await queryRows(t.databaseUrl, 'truncate membership');
    const deadline = Date.now() + 2000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = (await request(t.url, 'GET', `/api/svc/v1/projects/${project}`, { token })).status;
    expect(status).toBe(403);
  });
});

describe('switching the current organization, on an instance that hears no authorization change', () => {
  let t: TestApp;
  let token: string;
  const { atelierDemo, atelierNord } = DEMO_IDS.organizations;
  const current = async () => (await gql(t.url, token, '{ me { currentOrganizationId } }')).body.data.me.currentOrganizationId;
  beforeAll(async () => {
    // The instance keeps callers but its listener forgets none: only the switch itself can forget the one it keeps.
    const start = ChangeListener.prototype.start;
    const spy = jest.spyOn(ChangeListener.prototype, 'start').mockImplementation(function (this: ChangeListener, boundMs: number) {
      (this as unknown as { options: ChangeListenerOptions }).options.onCallerChange = () => undefined;
      return start.call(this, boundMs);
    });
    try {
      t = await startTestApp();
    } finally {
      spy.mockRestore();
    }
    token = await tokenFor(t.url, 'architect@demo.test');
  });
  afterAll(() => t?.close());

  it('the next request of the same caller has the new current organization, over GraphQL', async () => {
    expect(await current()).toBe(atelierDemo);
    await gql(t.url, token, `mutation { switchOrganization(organizationId: "${atelierNord}") { organization { id } } }`);
    expect(await current()).toBe(atelierNord);
    await gql(t.url, token, `mutation { switchOrganization(organizationId: "${atelierDemo}") { organization { id } } }`);
    expect(await current()).toBe(atelierDemo);
  });

  it('the next request of the same caller has the new current organization, over REST', async () => {
    expect(await current()).toBe(atelierDemo);
    expect((await request(t.url, 'POST', '/api/svc/v1/organizations/switch', { token, body: { organization_id: atelierNord } })).status).toBe(200);
    expect(await current()).toBe(atelierNord);
    expect((await request(t.url, 'POST', '/api/svc/v1/organizations/switch', { token, body: { organization_id: atelierDemo } })).status).toBe(200);
    expect(await current()).toBe(atelierDemo);
  });
});
