import { decodeJwt, decodeProtectedHeader } from 'jose';
import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS } from '../../seed/demo-data';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenRequest } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

const PROTECTED = '/api/svc/v1/organizations';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const passwordForm = (over: Record<string, string> = {}) => ({
  grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile', ...over,
});
const refreshForm = (refreshToken: string) => ({ grant_type: 'refresh_token', client_id: 'svc-api', refresh_token: refreshToken });

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const sql = <T>(query: string, params: unknown[] = []) => t.orm.em.fork().getConnection().execute<T[]>(query, params);

describe('POST /auth/token (password grant)', () => {
  it('answers exactly the token response of interface.md', async () => {
    const res = await tokenRequest(t.url, passwordForm());
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(
      ['access_token', 'expires_in', 'not-before-policy', 'refresh_expires_in', 'refresh_token', 'scope', 'session_state', 'token_type'],
    );
    expect(res.body).toEqual({
      access_token: expect.any(String),
      expires_in: 10800,
      refresh_token: expect.any(String),
      refresh_expires_in: 1800,
      token_type: 'Bearer',
      'not-before-policy': expect.any(Number),
      session_state: expect.stringMatching(UUID),
      scope: 'svc email profile',
    });
    expect(Number.isInteger(res.body['not-before-policy'])).toBe(true);
  });

  it('the access token is a signed JWT for this service, bound to the caller and its address', async () => {
    const res = await tokenRequest(t.url, passwordForm());
    const token = res.body.access_token as string;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: t.url, aud: 'svc-api', azp: 'svc-api', sub: DEMO_IDS.users.architect, scope: 'svc email profile',
      client_ip: '127.0.0.1', session_state: res.body.session_state,
    });
    expect(claims.exp! - claims.iat!).toBe(10800);
    expect((await request(t.url, 'GET', PROTECTED, { token })).status).toBe(200);
  });

  it('the login is case-insensitive and the scope is kept as asked', async () => {
    const res = await tokenRequest(t.url, passwordForm({ username: 'Architect@Demo.TEST', scope: 'email svc' }));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('email svc');
    expect((await request(t.url, 'GET', PROTECTED, { token: res.body.access_token })).status).toBe(200);
  });

  it('401 invalid_grant: wrong password', async () => {
    const res = await tokenRequest(t.url, passwordForm({ password: 'not-the-password' }));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    expect(res.text).not.toContain('not-the-password');
  });

  it('401 invalid_grant: unknown user, answered like a wrong password', async () => {
    const unknown = await tokenRequest(t.url, passwordForm({ username: 'nobody@demo.test' }));
    const wrong = await tokenRequest(t.url, passwordForm({ password: 'nope' }));
    expect([unknown.status, unknown.body]).toEqual([wrong.status, wrong.body]);
  });

  it('401 invalid_grant: a user who has no password (contractor contact)', async () => {
    const [contact] = await sql<{ email: string }>('select email from app_user where id = ?', [DEMO_IDS.users.pierreDurand]);
    const withPassword = await tokenRequest(t.url, passwordForm({ username: contact.email }));
    expect([withPassword.status, withPassword.body.error]).toEqual([401, 'invalid_grant']);
  });

  it('401 invalid_client: a client_id other than the configured one, or none', async () => {
    const other = await tokenRequest(t.url, passwordForm({ client_id: 'another-client' }));
    expect([other.status, other.body]).toEqual([401, { error: 'invalid_client', error_description: expect.any(String) }]);
    const { client_id: _, ...withoutClient } = passwordForm();
    const none = await tokenRequest(t.url, withoutClient);
    expect([none.status, none.body.error]).toEqual([401, 'invalid_client']);
  });

  it('the client may authenticate with HTTP Basic and an empty secret, as the API reference\'s "Authorize" does', async () => {
    const { client_id: _, ...withoutClient } = passwordForm();
    const basic = (credentials: string) => ({ Authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });
    const ok = await tokenRequest(t.url, withoutClient, basic('svc-api:'));
    expect([ok.status, ok.body.token_type]).toEqual([200, 'Bearer']);
    const other = await tokenRequest(t.url, withoutClient, basic('another-client:'));
    expect([other.status, other.body.error]).toEqual([401, 'invalid_client']);
    // The client is public: a secret is not what it was given, so the header does not name it.
    const withSecret = await tokenRequest(t.url, withoutClient, basic('svc-api:secret'));
    expect([withSecret.status, withSecret.body.error]).toEqual([401, 'invalid_client']);
  });

  it('400 invalid_request: username, password or scope missing', async () => {
    for (const field of ['username', 'password', 'scope']) {
      const form: Record<string, string> = passwordForm();
      delete form[field];
      const res = await tokenRequest(t.url, form);
      expect([field, res.status, res.body.error]).toEqual([field, 400, 'invalid_request']);
    }
  });

  it('400 unsupported_grant_type: another grant type', async () => {
    const res = await tokenRequest(t.url, passwordForm({ grant_type: 'client_credentials' }));
    expect([res.status, res.body.error]).toEqual([400, 'unsupported_grant_type']);
  });

  it('400 invalid_request: a body that is not a form', async () => {
    const res = await request(t.url, 'POST', '/auth/token', { body: passwordForm() });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });

  it('passwords are stored as slow salted hashes (scrypt), never in clear', async () => {
    const rows = await sql<{ email: string; password_hash: string }>(
      'select email, password_hash from app_user where email in (?, ?) order by email', [DEMO_USERS.architect, DEMO_USERS.other]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.password_hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]{16,}\$[A-Za-z0-9+/=]{80,}$/);
      expect(row.password_hash).not.toContain(DEMO_PASSWORD);
    }
    // Same password, different salts: different hashes.
    expect(rows[0].password_hash).not.toBe(rows[1].password_hash);
  });
});

describe('POST /auth/token (refresh_token grant)', () => {
  it('a refresh token gives a new working access token and a new refresh token, same session', async () => {
    const first = await tokenRequest(t.url, passwordForm());
    const refreshed = await tokenRequest(t.url, refreshForm(first.body.refresh_token));
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toEqual({
      access_token: expect.any(String), expires_in: 10800, refresh_token: expect.any(String), refresh_expires_in: 1800,
      token_type: 'Bearer', 'not-before-policy': expect.any(Number), session_state: first.body.session_state, scope: 'svc email profile',
    });
    expect(refreshed.body.access_token).not.toBe(first.body.access_token);
    expect(refreshed.body.refresh_token).not.toBe(first.body.refresh_token);
    expect((await request(t.url, 'GET', PROTECTED, { token: refreshed.body.access_token })).status).toBe(200);
    // And the chain goes on.
    const again = await tokenRequest(t.url, refreshForm(refreshed.body.refresh_token));
    expect(again.status).toBe(200);
  });

  it('400 invalid_grant: a reused refresh token, and the whole session is revoked', async () => {
    const first = await tokenRequest(t.url, passwordForm());
    const second = await tokenRequest(t.url, refreshForm(first.body.refresh_token));
    expect(second.status).toBe(200);

    const reuse = await tokenRequest(t.url, refreshForm(first.body.refresh_token));
    expect([reuse.status, reuse.body]).toEqual([400, { error: 'invalid_grant', error_description: expect.any(String) }]);

    // The refresh token of the legitimate refresh dies with the session.
    const afterReuse = await tokenRequest(t.url, refreshForm(second.body.refresh_token));
    expect([afterReuse.status, afterReuse.body.error]).toEqual([400, 'invalid_grant']);
    const [session] = await sql<{ revoked_at: string | null }>('select revoked_at from auth_session where id = ?', [first.body.session_state]);
    expect(session.revoked_at).not.toBeNull();

    // Other sessions of the same user are untouched.
    const other = await tokenRequest(t.url, passwordForm());
    expect((await tokenRequest(t.url, refreshForm(other.body.refresh_token))).status).toBe(200);
  });

  it('concurrent uses of one refresh token: exactly one succeeds, and the others count as reuse', async () => {
    const first = await tokenRequest(t.url, passwordForm());
    const results = await Promise.all([1, 2, 3].map(() => tokenRequest(t.url, refreshForm(first.body.refresh_token))));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    const winner = results.find((r) => r.status === 200)!;
    const next = await tokenRequest(t.url, refreshForm(winner.body.refresh_token));
    expect([next.status, next.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('400 invalid_grant: an unknown refresh token', async () => {
    const res = await tokenRequest(t.url, refreshForm('not-a-refresh-token'));
    expect([res.status, res.body]).toEqual([400, { error: 'invalid_grant', error_description: expect.any(String) }]);
    expect(res.text).not.toContain('not-a-refresh-token');
  });

  it('400 invalid_grant: an expired refresh token', async () => {
    const first = await tokenRequest(t.url, passwordForm());
    await sql(`update refresh_token set expires_at = now() - interval '1 second'
      where session_id = ? and used_at is null`, [first.body.session_state]);
    const res = await tokenRequest(t.url, refreshForm(first.body.refresh_token));
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('400 invalid_request: no refresh_token; 401 invalid_client: another client', async () => {
    const missing = await tokenRequest(t.url, { grant_type: 'refresh_token', client_id: 'svc-api' });
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_request']);
    const first = await tokenRequest(t.url, passwordForm());
    const otherClient = await tokenRequest(t.url, { ...refreshForm(first.body.refresh_token), client_id: 'another-client' });
    expect([otherClient.status, otherClient.body.error]).toEqual([401, 'invalid_client']);
  });

  it('a refresh token whose user lost the right to sign in gives no new token', async () => {
    const first = await tokenRequest(t.url, passwordForm({ username: DEMO_USERS.other }));
    await sql('update app_user set password_hash = null where id = ?', [DEMO_IDS.users.other]);
    const res = await tokenRequest(t.url, refreshForm(first.body.refresh_token));
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
  });
});

describe('GET /auth/jwks and GET /.well-known/openid-configuration', () => {
  it('the discovery document points at the token endpoint and the JWKS of this service', async () => {
    const res = await request(t.url, 'GET', '/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ issuer: t.url, token_endpoint: `${t.url}/auth/token`, jwks_uri: `${t.url}/auth/jwks` });
  });

  it('the JWKS holds public keys only, including the key of issued tokens', async () => {
    const token = (await tokenRequest(t.url, passwordForm())).body.access_token as string;
    const res = await request(t.url, 'GET', '/auth/jwks');
    expect(res.status).toBe(200);
    const key = res.body.keys.find((k: { kid: string }) => k.kid === decodeProtectedHeader(token).kid);
    expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', n: expect.any(String), e: 'AQAB' });
    for (const k of res.body.keys) expect(Object.keys(k).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
  });
});
