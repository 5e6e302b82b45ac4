import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** A signing key made in the test, with its public JWK. */
export interface TestKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A fresh RS256 key pair, unknown to every server until published. */
export async function generateTestKey(kid: string = randomUUID()): Promise<TestKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** Signs claims as given (no defaults added) with a key, its `kid` in the header unless overridden. */
export function signToken(key: TestKey, claims: JWTPayload, header: { kid?: string } = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: header.kid ?? key.kid }).sign(key.privateKey);
}

/** An external OpenID Connect identity provider: discovery document and JWKS, nothing of the service's code. */
export interface ExternalIdp {
  /** The issuer, also the base URL: `${url}/.well-known/openid-configuration`. */
  url: string;
  jwksUrl: string;
  key: TestKey;
  /** Requests received, by path (`/.well-known/openid-configuration`, `/keys`). */
  hits: Record<string, number>;
  /** A token of this provider: sensible claims (10 minutes, `svc-api`, scope `svc email profile`), overridable. */
  token(claims: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

/** Starts an external identity provider on an ephemeral loopback port, with its own key pair. */
export async function startExternalIdp(): Promise<ExternalIdp> {
  const key = await generateTestKey();
  const hits: Record<string, number> = {};
  let base = '';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    hits[path] = (hits[path] ?? 0) + 1;
    const send = (body: unknown) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    // A Keycloak-like layout: the JWKS is not under a path the service could guess.
    if (path === '/.well-known/openid-configuration') {
      send({ issuer: base, jwks_uri: `${base}/protocol/openid-connect/certs`, token_endpoint: `${base}/protocol/openid-connect/token` });
    } else if (path === '/protocol/openid-connect/certs') {
      send({ keys: [key.publicJwk] });
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
  return {
    url: base,
    jwksUrl: `${base}/protocol/openid-connect/certs`,
    key,
    hits,
    token(claims) {
      const now = Math.floor(Date.now() / 1000);
      return signToken(key, {
        iss: base, aud: 'svc-api', azp: 'svc-api', scope: 'svc email profile', client_ip: '127.0.0.1',
        iat: now, nbf: now, exp: now + 600, jti: randomUUID(), ...claims,
      });
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
