import { DEMO_IDS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const USR = DEMO_IDS.users;
const ROLES = DEMO_IDS.partnerRoles;
const UNKNOWN = '0b7e3c1a-5f7d-4c2e-9a61-3d2f1e0c9b8a';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const rolesPath = (userId: string) => `/api/svc/v1/pf/${userId}/roles`;

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

const codes = (body: { roles: { code: string }[] }) => body.roles.map((r) => r.code);

describe('GET /api/svc/v1/pf/{userId}/roles (#26)', () => {
  it('lists the roles currently authorized for the user, with when each was assigned', async () => {
    const res = await request(t.url, 'GET', rolesPath(USR.architect), { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      roles: [{ id: ROLES.viewer, code: 'PARTNER_VIEWER', name: 'Lecteur partenaire', assigned_at: '2026-03-02T10:00:00.000000Z' }],
    });
  });

  it('lists no role for a user of the caller\'s organization who holds none (a plain member included)', async () => {
    const res = await request(t.url, 'GET', rolesPath(USR.member), { token: architect });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ roles: [] });
  });

  it('answers 404 for a user of another organization, like an unknown user', async () => {
    for (const userId of [USR.other, USR.pierreDurand, UNKNOWN]) {
      const res = await request(t.url, 'GET', rolesPath(userId), { token: architect });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 404, message: 'User not found' });
    }
    expect((await request(t.url, 'GET', rolesPath(USR.architect), { token: other })).status).toBe(404);
  });

  it('answers 400 naming userId when it is not a UUID', async () => {
    const res = await request(t.url, 'GET', rolesPath('42'), { token: architect });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'userId', message: 'must be a UUID' }]);
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'GET', rolesPath(USR.architect))).status).toBe(401);
  });
});

describe('POST /api/svc/v1/pf/{userId}/roles (#27)', () => {
  afterEach(async () => {
    await request(t.url, 'DELETE', rolesPath(USR.member), { token: architect });
  });

  it('assigns the standard role when no body is sent: 201 with every role the user holds', async () => {
    const res = await request(t.url, 'POST', rolesPath(USR.member), { token: architect });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ roles: [{ id: ROLES.standard, code: 'PARTNER_STANDARD', name: 'Utilisateur partenaire', assigned_at: expect.stringMatching(TIMESTAMP) }] });
    const listed = await request(t.url, 'GET', rolesPath(USR.member), { token: architect });
    expect(listed.body).toEqual(res.body);
  });

  it('is idempotent: assigning a role the user holds answers 200 and changes nothing', async () => {
    const first = await request(t.url, 'POST', rolesPath(USR.member), { token: architect, body: {} });
    expect(first.status).toBe(201);
    const again = await request(t.url, 'POST', rolesPath(USR.member), { token: architect });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it('assigns the known role named by the optional body, keeping the roles already held', async () => {
    const res = await request(t.url, 'POST', rolesPath(USR.architect), { token: architect, body: { role: 'PARTNER_ADMIN' } });
    try {
      expect(res.status).toBe(201);
      expect(codes(res.body)).toEqual(['PARTNER_ADMIN', 'PARTNER_VIEWER']);
      const viewer = await request(t.url, 'POST', rolesPath(USR.architect), { token: architect, body: { role: 'PARTNER_VIEWER' } });
      expect(viewer.status).toBe(200);
      expect(codes(viewer.body)).toEqual(['PARTNER_ADMIN', 'PARTNER_VIEWER']);
    } finally {
      await t.orm.em.fork().getConnection().execute('delete from user_partner_role where user_id = ? and role_id = ?', [USR.architect, ROLES.admin]);
    }
  });

  it('answers 400 naming role for an unknown role, and assigns nothing', async () => {
    const res = await request(t.url, 'POST', rolesPath(USR.member), { token: architect, body: { role: 'PARTNER_OWNER' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'role', message: 'must be the code of a known partner role' }] });
    expect((await request(t.url, 'GET', rolesPath(USR.member), { token: architect })).body).toEqual({ roles: [] });
  });

  it('answers 400 for a role that is not a string, and for a field the operation does not accept', async () => {
    const number = await request(t.url, 'POST', rolesPath(USR.member), { token: architect, body: { role: 7 } });
    expect(number.status).toBe(400);
    expect(number.body.errors).toEqual([{ field: 'role', message: 'must be a string' }]);
    const unknown = await request(t.url, 'POST', rolesPath(USR.member), { token: architect, body: { roles: ['PARTNER_ADMIN'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'roles', message: 'is not accepted by this operation' }]);
  });

  it('answers 404 for a user of another organization and assigns nothing', async () => {
    const res = await request(t.url, 'POST', rolesPath(USR.other), { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'User not found' });
    expect((await request(t.url, 'GET', rolesPath(USR.other), { token: other })).body).toEqual({ roles: [] });
    expect((await request(t.url, 'POST', rolesPath(UNKNOWN), { token: architect })).status).toBe(404);
  });

  it('answers 401 without a token', async () => {
    expect((await request(t.url, 'POST', rolesPath(USR.member))).status).toBe(401);
  });
});

describe('DELETE /api/svc/v1/pf/{userId}/roles (#28)', () => {
  it('removes every role of the user: 204, then none is listed; again is still 204', async () => {
    await request(t.url, 'POST', rolesPath(USR.member), { token: architect });
    await request(t.url, 'POST', rolesPath(USR.member), { token: architect, body: { role: 'PARTNER_ADMIN' } });
    const res = await request(t.url, 'DELETE', rolesPath(USR.member), { token: architect });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await request(t.url, 'GET', rolesPath(USR.member), { token: architect })).body).toEqual({ roles: [] });
    expect((await request(t.url, 'DELETE', rolesPath(USR.member), { token: architect })).status).toBe(204);
  });

  it('answers 404 for a user of another organization and leaves their roles alone', async () => {
    expect((await request(t.url, 'POST', rolesPath(USR.other), { token: other })).status).toBe(201);
    const res = await request(t.url, 'DELETE', rolesPath(USR.other), { token: architect });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'User not found' });
    expect(codes((await request(t.url, 'GET', rolesPath(USR.other), { token: other })).body)).toEqual(['PARTNER_STANDARD']);
    expect((await request(t.url, 'DELETE', rolesPath(UNKNOWN), { token: architect })).status).toBe(404);
  });

  it('answers 400 for a userId that is not a UUID', async () => {
    expect((await request(t.url, 'DELETE', rolesPath('x'), { token: architect })).status).toBe(400);
  });

  it('answers 401 without a token, and removes nothing', async () => {
    expect((await request(t.url, 'DELETE', rolesPath(USR.architect))).status).toBe(401);
    expect(codes((await request(t.url, 'GET', rolesPath(USR.architect), { token: architect })).body)).toEqual(['PARTNER_VIEWER']);
  });
});
