import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../config';
import { ForbiddenError, UnauthenticatedError } from '../errors';

/** What a verified access token says about its bearer. */
export interface VerifiedToken {
  sub: string;
  scope: string[];
  clientIp: string;
  payload: JWTPayload;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `::ffff:127.0.0.1` and `127.0.0.1` are the same client. */
export function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

/**
 * Verifies bearer tokens of the configured OpenID Connect provider: signature against its JWKS (found
 * through discovery unless configured; cached, refetched on an unknown `kid`), issuer, audience or
 * authorized party, time claims, the service scope and the client address binding.
 * One instance lives as long as the app, so the key cache does too.
 */
export class TokenVerifier {
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;
  private jwksFor = '';

  constructor(private readonly config: Config) {}

  private async keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const { issuer, jwksUrl, jwksCooldownMs } = this.config.auth;
    const cacheKey = `${issuer}|${jwksUrl ?? ''}`;
    if (this.jwks && this.jwksFor === cacheKey) return this.jwks;
    const url = jwksUrl ?? (await this.discoverJwksUrl(issuer));
    this.jwks = createRemoteJWKSet(new URL(url), { cooldownDuration: jwksCooldownMs, timeoutDuration: 5000 });
    this.jwksFor = cacheKey;
    return this.jwks;
  }

  private async discoverJwksUrl(issuer: string): Promise<string> {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`OpenID discovery of ${issuer} answered ${res.status}`);
    const doc = (await res.json()) as { jwks_uri?: unknown; issuer?: unknown };
    if (typeof doc.jwks_uri !== 'string') throw new Error(`OpenID discovery of ${issuer} has no jwks_uri`);
    return doc.jwks_uri;
  }

  /** Verifies the Authorization header of a request from `requestIp`; 401 or 403 when it must be refused. */
  async verify(authorization: string | undefined, requestIp: string): Promise<VerifiedToken> {
    if (!authorization) throw new UnauthenticatedError('Missing Authorization header');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new UnauthenticatedError('The Authorization header must be "Bearer <token>"');
    const token = match[1];
    if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) throw new UnauthenticatedError('The bearer token is not a JWT');

    const { issuer, clientId, scope: requiredScope, clockToleranceSeconds } = this.config.auth;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.keySet(), {
        issuer,
        clockTolerance: clockToleranceSeconds,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      throw mapJoseError(err);
    }
    const aud = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
    if (!aud.includes(clientId) && payload.azp !== clientId) {
      throw new UnauthenticatedError('The token was not issued for this service (audience)');
    }
    const scope = typeof payload.scope === 'string' ? payload.scope.split(/\s+/).filter(Boolean) : [];
    if (!scope.includes(requiredScope)) {
      throw new UnauthenticatedError(`The token does not carry the "${requiredScope}" scope`);
    }
    if (typeof payload.sub !== 'string' || !UUID.test(payload.sub)) throw new UnauthenticatedError('The token subject is not a user of this service');
    if (typeof payload.client_ip !== 'string') throw new UnauthenticatedError('The token is not bound to a client address');
    if (normalizeIp(payload.client_ip) !== normalizeIp(requestIp)) {
      throw new ForbiddenError('The token was issued to another client address');
    }
    return { sub: payload.sub.toLowerCase(), scope, clientIp: payload.client_ip, payload };
  }
}

function mapJoseError(err: unknown): Error {
  if (err instanceof errors.JWSSignatureVerificationFailed) return new ForbiddenError('The token signature does not verify: the token was altered');
  if (err instanceof errors.JWTExpired) return new UnauthenticatedError('The token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return new UnauthenticatedError('The token is not valid yet');
    if (err.claim === 'iss') return new UnauthenticatedError('The token was issued by another issuer');
    return new UnauthenticatedError(`The token claim "${err.claim}" is not valid`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return new UnauthenticatedError('The token was signed with an unknown key');
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return new UnauthenticatedError('The token algorithm is not accepted');
  if (err instanceof errors.JWTInvalid || err instanceof errors.JWSInvalid) return new UnauthenticatedError('The bearer token is not a valid JWT');
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return new Error(`The identity provider's keys could not be read: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}
