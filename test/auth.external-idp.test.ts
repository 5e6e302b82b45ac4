import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenRequest } from './support/auth';
import { request } from './support/http';
import { generateTestKey, signToken, startExternalIdp, type ExternalIdp } from './support/idp-server';

const ORGS = '/api/svc/v1/organizations';
const names = (body: { organizations: { name: string }[] }) => body.organizations.map((o) => o.name);

describe('Authentication against an external identity provider (production mode)', () => {
  let idp: ExternalIdp;
  let t: TestApp;
  beforeAll(async () => {
    idp = await startExternalIdp();
    t = await startTestApp({ AUTH_DEV_PROVIDER: 'false', AUTH_ISSUER: idp.url, AUTH_JWKS_COOLDOWN_MS: '0' });
  });
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  it('a token of the external provider is accepted: keys found through its discovery document', async () => {
    const token = await idp.token({ sub: DEMO_IDS.users.architect });
    const res = await request(t.url, 'GET', ORGS, { token });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Atelier Demo', 'Atelier Nord']);
    expect(idp.hits['/.well-known/openid-configuration']).toBe(1);
    expect(idp.hits['/protocol/openid-connect/certs']).toBe(1);
    // Cached: further requests fetch nothing.
    expect((await request(t.url, 'GET', ORGS, { token: await idp.token({ sub: DEMO_IDS.users.other }) })).status).toBe(200);
    expect(idp.hits['/.well-known/openid-configuration']).toBe(1);
    expect(idp.hits['/protocol/openid-connect/certs']).toBe(1);
  });

  it('the authorization rules are the same: member 403, other sees Cabinet Sud only', async () => {
    expect((await request(t.url, 'GET', ORGS, { token: await idp.token({ sub: DEMO_IDS.users.member }) })).status).toBe(403);
    const other = await request(t.url, 'GET', ORGS, { token: await idp.token({ sub: DEMO_IDS.users.other }) });
    expect(names(other.body)).toEqual(['Cabinet Sud']);
  });

  it('the built-in provider is off: /auth/token, /auth/jwks and discovery answer 404', async () => {
    const token = await tokenRequest(t.url, { grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc' });
    expect(token.status).toBe(404);
    expect((await request(t.url, 'GET', '/auth/jwks')).status).toBe(404);
    expect((await request(t.url, 'GET', '/.well-known/openid-configuration')).status).toBe(404);
  });

  it('the claim rules apply to external tokens: issuer, audience, scope, expiry, address', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ iss: 'http://127.0.0.1:1/realms/other' }, 401],
      [{ aud: 'account', azp: 'another-client' }, 401],
      [{ scope: 'email profile' }, 401],
      [{ exp: now - 60 }, 401],
      [{ client_ip: '10.3.3.3' }, 403],
    ];
    for (const [claims, status] of cases) {
      const res = await request(t.url, 'GET', ORGS, { token: await idp.token({ sub: DEMO_IDS.users.architect, ...claims }) });
      expect([claims, res.status]).toEqual([claims, status]);
    }
  });

  it('a token signed by another key: unknown kid 401, the provider\'s kid 403', async () => {
    const stranger = await generateTestKey();
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: idp.url, aud: 'svc-api', scope: 'svc', sub: DEMO_IDS.users.architect, client_ip: '127.0.0.1', exp: now + 600 };
    expect((await request(t.url, 'GET', ORGS, { token: await signToken(stranger, claims) })).status).toBe(401);
    expect((await request(t.url, 'GET', ORGS, { token: await signToken(stranger, claims, { kid: idp.key.kid }) })).status).toBe(403);
  });
});

describe('Authentication with an explicit JWKS URL (no discovery)', () => {
  let idp: ExternalIdp;
  let t: TestApp;
  beforeAll(async () => {
    idp = await startExternalIdp();
    // The issuer's discovery path is never asked: the issuer below serves nothing at all.
    t = await startTestApp({ AUTH_DEV_PROVIDER: 'false', AUTH_ISSUER: 'https://sso.example.invalid/realms/tender', AUTH_JWKS_URL: idp.jwksUrl });
  });
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  it('tokens verify against the configured JWKS URL', async () => {
    const token = await idp.token({ iss: 'https://sso.example.invalid/realms/tender', sub: DEMO_IDS.users.architect });
    const res = await request(t.url, 'GET', ORGS, { token });
    expect([res.status, names(res.body)]).toEqual([200, ['Atelier Demo', 'Atelier Nord']]);
    expect(idp.hits['/.well-known/openid-configuration']).toBeUndefined();
    expect(idp.hits['/protocol/openid-connect/certs']).toBe(1);
  });
});

describe('Authentication when the identity provider cannot be reached', () => {
  it('503 with Retry-After, a message that names the provider, and no library text; recovers when it is back', async () => {
    const idp = await startExternalIdp();
    const token = await idp.token({ sub: DEMO_IDS.users.architect });
    const issuer = idp.url;
    await idp.close();
    const t = await startTestApp({ AUTH_DEV_PROVIDER: 'false', AUTH_ISSUER: issuer });
    try {
      const res = await request(t.url, 'GET', ORGS, { token });
      expect([res.status, res.body]).toEqual([503, { code: 503, message: 'The identity provider cannot be reached to verify the token, try again shortly' }]);
      expect(res.headers.get('retry-after')).toBe('5');
      // A provider that answers, but not with a JWKS.
      const broken = await startExternalIdp();
      t.config.auth.issuer = broken.url;
      t.config.auth.jwksUrl = `${broken.url}/nothing-here`;
      try {
        const res2 = await request(t.url, 'GET', ORGS, { token: await broken.token({ sub: DEMO_IDS.users.architect }) });
        expect(res2.status).toBe(503);
        // Configuration fixed: the next request works, no restart.
        t.config.auth.jwksUrl = broken.jwksUrl;
        expect((await request(t.url, 'GET', ORGS, { token: await broken.token({ sub: DEMO_IDS.users.architect }) })).status).toBe(200);
      } finally {
        await broken.close();
      }
    } finally {
      await t.close();
    }
  });
});
