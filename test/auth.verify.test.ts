import { decodeJwt, decodeProtectedHeader } from 'jose';
import { IdentityProviderService } from '../src/modules/identity/identity-provider.service';
import { DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor, tokenRequest } from './support/auth';
import { answered } from './support/graphql';
import { request, type HttpResponse } from './support/http';
import { generateTestKey, signToken } from './support/idp-server';
import { alterPayload, alterSignature, otherChar, resignWithProviderKey } from './support/idp-tokens';

const PROTECTED = '/api/svc/v1/organizations';
const now = () => Math.floor(Date.now() / 1000);

/** The refusal body: `{code, message}` only, and nothing of the token in it. */
function expectRefused(res: HttpResponse, status: 401 | 403, message: string, token?: string) {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: { code: status, message } });
  if (token) {
    for (const part of token.split('.').filter((p) => p.length > 8)) expect(res.text).not.toContain(part);
  }
}

let t: TestApp;
let architect: string;
beforeAll(async () => {
  t = await startTestApp({ AUTH_JWKS_COOLDOWN_MS: '0' });
  architect = await tokenFor(t.url, DEMO_USERS.architect);
});
afterAll(() => t.close());

describe('Authentication: Authorization header on every operation', () => {
  it('a valid token of the provider is accepted (200)', async () => {
    const res = await request(t.url, 'GET', PROTECTED, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.organizations.map((o: { name: string }) => o.name)).toEqual(['Atelier Demo', 'Atelier Nord']);
  });

  it('401: missing Authorization header', async () => {
    expectRefused(await request(t.url, 'GET', PROTECTED), 401, 'Missing Authorization header');
  });

  it('401: a scheme other than Bearer', async () => {
    const res = await request(t.url, 'GET', PROTECTED, { headers: { Authorization: `Basic ${architect}` } });
    expectRefused(res, 401, 'The Authorization header must be "Bearer <token>"', architect);
    const empty = await request(t.url, 'GET', PROTECTED, { headers: { Authorization: 'Bearer' } });
    expectRefused(empty, 401, 'The Authorization header must be "Bearer <token>"');
  });

  it('401: garbage that is not a JWT', async () => {
    const garbage = 'this-is-definitely-not-a-token';
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: garbage }), 401, 'The bearer token is not a JWT', garbage);
    // Three segments, but nothing decodes to a JOSE header.
    const dotted = 'abcdefghij.klmnopqrst.uvwxyzabcd';
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: dotted }), 401, 'The bearer token is not a valid JWT', dotted);
  });

  it('a token re-signed by the provider key with unchanged claims is accepted (the helper makes valid tokens)', async () => {
    const same = await resignWithProviderKey(t.orm, architect, (c) => c);
    expect((await request(t.url, 'GET', PROTECTED, { token: same })).status).toBe(200);
  });

  it('401: expired token (beyond the clock tolerance)', async () => {
    const expired = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, iat: now() - 11000, nbf: now() - 11000, exp: now() - 60 }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: expired }), 401, 'The token has expired', expired);
  });

  it('a token expired by less than the clock tolerance (5 s) is still accepted', async () => {
    const justExpired = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, exp: now() - 2 }));
    expect((await request(t.url, 'GET', PROTECTED, { token: justExpired })).status).toBe(200);
  });

  it('a token verified on an earlier request is refused once it expires: the signature is kept, not the expiry check', async () => {
    // Expires 2 s from now, within the 5 s tolerance for 7 s: accepted (and its signature kept), then refused.
    const shortLived = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, exp: now() + 2 }));
    expect((await request(t.url, 'GET', PROTECTED, { token: shortLived })).status).toBe(200);
    expect((await request(t.url, 'GET', PROTECTED, { token: shortLived })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 8000));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: shortLived }), 401, 'The token has expired', shortLived);
  }, 20000);

  it('401: token not valid yet (nbf in the future beyond the tolerance)', async () => {
    const early = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, nbf: now() + 120 }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: early }), 401, 'The token is not valid yet', early);
    const slightlyEarly = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, nbf: now() + 2 }));
    expect((await request(t.url, 'GET', PROTECTED, { token: slightlyEarly })).status).toBe(200);
  });

  it('401: a token without exp', async () => {
    const eternal = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, exp: undefined }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: eternal }), 401, 'The token has no "exp" claim', eternal);
  });

  it('401: wrong issuer', async () => {
    const foreign = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, iss: 'https://idp.elsewhere.example/realms/x' }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: foreign }), 401, 'The token was issued by another issuer', foreign);
  });

  it('401: wrong audience (neither aud nor azp is the client id)', async () => {
    const other = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, aud: 'another-client', azp: 'another-client' }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: other }), 401, 'The token was not issued for this service (audience)', other);
  });

  it('the authorized party alone is enough (Keycloak puts "account" in aud)', async () => {
    const keycloakLike = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, aud: 'account', azp: 'svc-api' }));
    expect((await request(t.url, 'GET', PROTECTED, { token: keycloakLike })).status).toBe(200);
    const audOnly = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, aud: ['account', 'svc-api'], azp: undefined }));
    expect((await request(t.url, 'GET', PROTECTED, { token: audOnly })).status).toBe(200);
  });

  it('401: a token requested without the svc scope', async () => {
    const noScope = await tokenFor(t.url, DEMO_USERS.architect, 'email profile');
    expect(decodeJwt(noScope).scope).toBe('email profile');
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: noScope }), 401, 'The token does not carry the "svc" scope', noScope);
  });

  it('401: a scope that only contains "svc" as part of a word is not the svc scope', async () => {
    const lookalike = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, scope: 'svc-admin email' }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: lookalike }), 401, 'The token does not carry the "svc" scope', lookalike);
  });

  it('401: a subject that is not a user of this service', async () => {
    const stranger = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, sub: '0f0f0f0f-0000-4000-8000-000000000000' }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: stranger }), 401, 'The token subject is not a user of this service', stranger);
    const notUuid = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, sub: 'claire' }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: notUuid }), 401, 'The token subject is not a user of this service', notUuid);
  });

  it('401: a token that is not bound to a client address', async () => {
    const unbound = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, client_ip: undefined }));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: unbound }), 401, 'The token is not bound to a client address', unbound);
  });

  it('403: altered signature (one character of the signature changed)', async () => {
    const altered = alterSignature(architect);
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: altered }), 403, 'The token signature does not verify: the token was altered', altered);
  });

  it('403: altered signature in its last character, where base64url has spare bits', async () => {
    // The last character of a 256-byte signature carries 2 bits: changing only the spare ones leaves the
    // decoded bytes as they were, yet the token is not the one the provider issued.
    const [h, p, s] = architect.split('.');
    for (const flip of [1, 2, 3]) {
      const altered = `${h}.${p}.${s.slice(0, -1)}${otherChar(s.at(-1)!, flip)}`;
      expectRefused(await request(t.url, 'GET', PROTECTED, { token: altered }), 403, 'The token signature does not verify: the token was altered', altered);
    }
  });

  it('403: altered payload (another user, another address, a longer life), signature kept', async () => {
    for (const change of [
      (c: Record<string, unknown>) => ({ ...c, sub: decodeJwt(architect).sub!.replace(/1$/, '2') }),
      (c: Record<string, unknown>) => ({ ...c, client_ip: '10.9.9.9' }),
      (c: Record<string, unknown>) => ({ ...c, exp: (c.exp as number) + 86400 }),
    ]) {
      const altered = alterPayload(architect, change);
      expectRefused(await request(t.url, 'GET', PROTECTED, { token: altered }), 403, 'The token signature does not verify: the token was altered', altered);
    }
  });

  it('403: a token signed by another key under the provider\'s own kid', async () => {
    const impostor = await generateTestKey();
    const forged = await signToken(impostor, decodeJwt(architect), { kid: decodeProtectedHeader(architect).kid });
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: forged }), 403, 'The token signature does not verify: the token was altered', forged);
  });

  it('401: a token whose kid is in no JWKS', async () => {
    const stranger = await generateTestKey();
    const unknownKid = await signToken(stranger, decodeJwt(architect));
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: unknownKid }), 401, 'The token was signed with an unknown key', unknownKid);
  });

  it('401: the "none" algorithm is not accepted', async () => {
    const [, p] = architect.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT', kid: decodeProtectedHeader(architect).kid })).toString('base64url');
    const unsigned = `${header}.${p}.${Buffer.from('nothing').toString('base64url')}`;
    expectRefused(await request(t.url, 'GET', PROTECTED, { token: unsigned }), 401, 'The token algorithm is not accepted', unsigned);
  });

  it('401 answers carry WWW-Authenticate: Bearer', async () => {
    const res = await request(t.url, 'GET', PROTECTED);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="svc"/);
  });
});

describe('Authentication: POST /graphql verifies tokens the same way', () => {
  const query = { query: '{ __typename }' };
  it('401 without a token, 403 with an altered one, 200 with a valid one', async () => {
    expect((await request(t.url, 'POST', '/graphql', { body: query })).status).toBe(401);
    expect((await request(t.url, 'POST', '/graphql', { body: query, token: alterSignature(architect) })).status).toBe(403);
    const ok = await request(t.url, 'POST', '/graphql', { body: query, token: architect });
    expect([ok.status, ok.body]).toEqual([200, answered({ __typename: 'Query' })]);
  });
});

describe('Authentication: client address binding (client_ip)', () => {
  let proxied: TestApp;
  beforeAll(async () => {
    proxied = await startTestApp({ TRUST_PROXY: 'true' });
  });
  afterAll(() => proxied.close());

  const passwordForm = { grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' };

  it('the token carries the address it was issued to', async () => {
    expect(decodeJwt(architect).client_ip).toBe('127.0.0.1');
  });

  it('with proxy trust: the address comes from X-Forwarded-For, and another address gets 403', async () => {
    const issued = await tokenRequest(proxied.url, passwordForm, { 'X-Forwarded-For': '10.1.1.1' });
    expect(issued.status).toBe(200);
    const token = issued.body.access_token as string;
    expect(decodeJwt(token).client_ip).toBe('10.1.1.1');
    const same = await request(proxied.url, 'GET', PROTECTED, { token, headers: { 'X-Forwarded-For': '10.1.1.1' } });
    expect(same.status).toBe(200);
    const moved = await request(proxied.url, 'GET', PROTECTED, { token, headers: { 'X-Forwarded-For': '10.2.2.2' } });
    expectRefused(moved, 403, 'The token was issued to another client address', token);
    // Without the header the address is the proxy's (the socket), not the client's.
    const direct = await request(proxied.url, 'GET', PROTECTED, { token });
    expectRefused(direct, 403, 'The token was issued to another client address', token);
  });

  it('with proxy trust: the client is the address the proxy appended, not what the client put before it', async () => {
    const issued = await tokenRequest(proxied.url, passwordForm, { 'X-Forwarded-For': '10.7.7.7, 10.1.1.1' });
    const token = issued.body.access_token as string;
    expect(decodeJwt(token).client_ip).toBe('10.1.1.1');
    const sameClient = await request(proxied.url, 'GET', PROTECTED, { token, headers: { 'X-Forwarded-For': '10.8.8.8, 10.1.1.1' } });
    expect(sameClient.status).toBe(200);
    // A thief at 10.2.2.2 forging the victim's address in front: the proxy still appends the thief's.
    const forged = await request(proxied.url, 'GET', PROTECTED, { token, headers: { 'X-Forwarded-For': '10.1.1.1, 10.2.2.2' } });
    expectRefused(forged, 403, 'The token was issued to another client address', token);
  });

  it('without proxy trust: X-Forwarded-For is ignored when issuing and when verifying', async () => {
    const issued = await tokenRequest(t.url, passwordForm, { 'X-Forwarded-For': '10.1.1.1' });
    const token = issued.body.access_token as string;
    expect(decodeJwt(token).client_ip).toBe('127.0.0.1');
    const res = await request(t.url, 'GET', PROTECTED, { token, headers: { 'X-Forwarded-For': '10.2.2.2' } });
    expect(res.status).toBe(200);
  });

  it('without proxy trust: a token bound to another address gets 403 whatever X-Forwarded-For says', async () => {
    const elsewhere = await resignWithProviderKey(t.orm, architect, (c) => ({ ...c, client_ip: '10.1.1.1' }));
    const res = await request(t.url, 'GET', PROTECTED, { token: elsewhere, headers: { 'X-Forwarded-For': '10.1.1.1' } });
    expectRefused(res, 403, 'The token was issued to another client address', elsewhere);
  });
});

describe('Authentication: the built-in provider\'s keys, in process, and their rotation without a restart', () => {
  let r: TestApp;
  let selfRequests = 0;
  let keyLoads: jest.SpyInstance;
  beforeAll(async () => {
    r = await startTestApp({ AUTH_JWKS_COOLDOWN_MS: '0' });
    r.server.server.on('request', (req) => {
      if (req.url === '/auth/jwks' || req.url === '/.well-known/openid-configuration') selfRequests++;
    });
    keyLoads = jest.spyOn(IdentityProviderService.prototype, 'verificationKeys');
  });
  afterAll(async () => {
    await r.close();
    keyLoads?.mockRestore();
  });

  it('tokens of the built-in provider are verified against its keys read in process, never fetched from itself over HTTP', async () => {
    const token = await tokenFor(r.url, DEMO_USERS.architect);
    expect((await request(r.url, 'GET', PROTECTED, { token })).status).toBe(200);
    expect(keyLoads).toHaveBeenCalledTimes(1);
    expect(selfRequests).toBe(0);
  });

  it('keys are cached; an unknown kid reloads them; old and new tokens both verify', async () => {
    keyLoads.mockClear();
    const before = await tokenFor(r.url, DEMO_USERS.architect);
    for (let i = 0; i < 3; i++) expect((await request(r.url, 'GET', PROTECTED, { token: before })).status).toBe(200);
    expect(keyLoads).toHaveBeenCalledTimes(0);

    const rotated = await new IdentityProviderService(r.orm.em.fork(), r.config).rotateSigningKey();
    const after = await tokenFor(r.url, DEMO_USERS.architect);
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    expect(decodeProtectedHeader(after).kid).not.toBe(decodeProtectedHeader(before).kid);

    expect((await request(r.url, 'GET', PROTECTED, { token: after })).status).toBe(200);
    expect(keyLoads).toHaveBeenCalledTimes(1);
    expect((await request(r.url, 'GET', PROTECTED, { token: before })).status).toBe(200);
    expect((await request(r.url, 'GET', PROTECTED, { token: after })).status).toBe(200);
    expect(keyLoads).toHaveBeenCalledTimes(1);
    expect(selfRequests).toBe(0);

    const jwks = await request(r.url, 'GET', '/auth/jwks');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([decodeProtectedHeader(before).kid, rotated.kid].sort());
    for (const k of jwks.body.keys) expect(Object.keys(k).filter((f) => ['d', 'p', 'q', 'dp', 'dq', 'qi'].includes(f))).toEqual([]);
  });
});
