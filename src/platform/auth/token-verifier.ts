import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config';
import { AppError, ForbiddenError, ServiceUnavailableError, UnauthenticatedError } from '../errors/errors';
import { toAppError } from '../errors/database-faults';
import { isUuid } from '../database/uuid';

/** What a verified access token says about its bearer. */
export interface VerifiedToken {
  sub: string;
  scope: string[];
  clientIp: string;
  payload: JWTPayload;
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are the same client; IPv6 hex digits compare without case. */
function normalizeIp(ip: string): string {
  const trimmed = ip.trim().toLowerCase();
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}

/** The provider's keys could not be read (down, slow, or answering something that is not a JWKS): 503. */
class KeysUnavailableError extends ServiceUnavailableError {
  constructor(cause: unknown) {
    super('The identity provider cannot be reached to verify the token, try again shortly', { cause });
  }
}

/** The public keys of the built-in identity provider, read from the database. */
export type OwnKeys = () => Promise<JSONWebKeySet>;

/**
 * Verifies bearer tokens of the configured OpenID Connect provider: signature against its JWKS (found
 * through discovery unless configured; cached, refetched on an unknown `kid`), issuer, audience or
 * authorized party, time claims, the service scope and the client address binding.
 * When the issuer is the built-in provider of this very service, its keys are read in process (`ownKeys`)
 * instead of over HTTP from ourselves, which fails once the listener is closed at shutdown; they go
 * through the same JWKS cache, so caching and refetching on an unknown `kid` follow the same rules.
 * One instance lives as long as the app, so the key cache does too.
 */
export class TokenVerifier {
  private jwks: Promise<JWTVerifyGetKey> | null = null;
  private jwksFor = '';
  /**
   * Signatures already verified, by token and issuer, for a minute at most: an RS256 verification was about a
   * tenth of a REST request's CPU, and a client sends one token many times. Expiry and every claim below are still
   * checked on each request; a key withdrawn from the provider's JWKS is not seen sooner without this cache,
   * since jose keeps the keys it fetched until an unknown `kid` makes it fetch again (docs/caching.md).
   */
  private readonly verified = new LRUCache<string, JWTPayload>({ max: 10000, ttl: 60000 });

  constructor(private readonly config: Config, private readonly ownKeys: OwnKeys | null = null) {}

  /** The key resolver; shared by concurrent first requests, dropped when discovery fails so the next retries. */
  private keySet(): Promise<JWTVerifyGetKey> {
    const { issuer, jwksUrl } = this.config.auth;
    const own = this.ownKeys !== null && jwksUrl === null && issuer === this.config.publicUrl;
    const cacheKey = `${issuer}|${jwksUrl ?? ''}|${own}`;
    if (this.jwks && this.jwksFor === cacheKey) return this.jwks;
    this.jwksFor = cacheKey;
    const pending = this.createKeySet(issuer, jwksUrl, own);
    this.jwks = pending;
    pending.catch(() => {
      if (this.jwks === pending) this.jwks = null;
    });
    return pending;
  }

  private async createKeySet(issuer: string, jwksUrl: string | null, own: boolean): Promise<JWTVerifyGetKey> {
    const url = own ? `${issuer}/auth/jwks` : jwksUrl ?? (await this.discoverJwksUrl(issuer));
    const ownKeys = this.ownKeys;
    const remote = createRemoteJWKSet(new URL(url), {
      cooldownDuration: this.config.auth.jwksCooldownMs,
      timeoutDuration: 5000,
      ...(own && ownKeys ? { [customFetch]: async () => new Response(JSON.stringify(await ownKeys()), { headers: { 'Content-Type': 'application/json' } }) } : {}),
    });
    return async (header, token) => {
      try {
        return await remote(header, token);
      } catch (err) {
        // Key selection failures are the token's fault (401/403 below); fetch failures are the provider's,
        // or the database's (already a 503 of its own) for our own keys.
        if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys
          || err instanceof errors.JOSENotSupported || err instanceof errors.JOSEAlgNotAllowed) throw err;
        throw toAppError(err) ?? new KeysUnavailableError(err);
      }
    };
  }

  private async discoverJwksUrl(issuer: string): Promise<string> {
    let doc: { jwks_uri?: unknown };
    try {
      const res = await fetch(`${issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000), redirect: 'manual' });
      if (!res.ok) throw new Error(`OpenID discovery of ${issuer} answered ${res.status}`);
      doc = (await res.json()) as { jwks_uri?: unknown };
    } catch (err) {
      throw new KeysUnavailableError(err);
    }
    if (typeof doc.jwks_uri !== 'string') throw new KeysUnavailableError(new Error(`OpenID discovery of ${issuer} has no jwks_uri`));
    return doc.jwks_uri;
  }

  /** Verifies the Authorization header of a request from `requestIp`; 401 or 403 when it must be refused. */
  async verify(authorization: string | undefined, requestIp: string): Promise<VerifiedToken> {
    if (!authorization) throw new UnauthenticatedError('Missing Authorization header');
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match) throw new UnauthenticatedError('The Authorization header must be "Bearer <token>"');
    const token = match[1];
    if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) throw new UnauthenticatedError('The bearer token is not a JWT');

    const { issuer, clientId, scope: requiredScope, clockToleranceSeconds } = this.config.auth;
    const cacheKey = `${issuer} ${token}`;
    let payload = this.verified.get(cacheKey);
    // A kept token past its expiry goes through jose again, which refuses it with the usual answer.
    if (!payload || (payload.exp! + clockToleranceSeconds) * 1000 <= Date.now()) {
      try {
        ({ payload } = await jwtVerify(token, await this.keySet(), {
          issuer,
          clockTolerance: clockToleranceSeconds,
          requiredClaims: ['sub', 'exp'],
        }));
      } catch (err) {
        throw mapJoseError(err);
      }
      // base64url leaves spare bits in the last character; changing them keeps the signature bytes, yet the
      // token is not the one issued. Only the canonical encoding is accepted.
      const signature = token.slice(token.lastIndexOf('.') + 1);
      if (Buffer.from(signature, 'base64url').toString('base64url') !== signature) throw altered();
      this.verified.set(cacheKey, payload);
    }

    const aud = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
    if (!aud.includes(clientId) && payload.azp !== clientId) {
      throw new UnauthenticatedError('The token was not issued for this service (audience)');
    }
    const scope = typeof payload.scope === 'string' ? payload.scope.split(/\s+/).filter(Boolean) : [];
    if (!scope.includes(requiredScope)) {
      throw new UnauthenticatedError(`The token does not carry the "${requiredScope}" scope`);
    }
    if (!isUuid(payload.sub)) throw new UnauthenticatedError('The token subject is not a user of this service');
    if (typeof payload.client_ip !== 'string') throw new UnauthenticatedError('The token is not bound to a client address');
    if (normalizeIp(payload.client_ip) !== normalizeIp(requestIp)) {
      throw new ForbiddenError('The token was issued to another client address');
    }
    return { sub: payload.sub.toLowerCase(), scope, clientIp: payload.client_ip, payload };
  }
}

const altered = () => new ForbiddenError('The token signature does not verify: the token was altered');

/** jose's errors to the status rules of decisions.md section 3; their messages never reach the client. */
function mapJoseError(err: unknown): Error {
  if (err instanceof AppError) return err;
  if (err instanceof errors.JWSSignatureVerificationFailed) return altered();
  if (err instanceof errors.JWTExpired) return new UnauthenticatedError('The token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.reason === 'missing') return new UnauthenticatedError(`The token has no "${err.claim}" claim`);
    if (err.claim === 'nbf') return new UnauthenticatedError('The token is not valid yet');
    if (err.claim === 'iss') return new UnauthenticatedError('The token was issued by another issuer');
    return new UnauthenticatedError(`The token claim "${err.claim}" is not valid`);
  }
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return new UnauthenticatedError('The token was signed with an unknown key');
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return new UnauthenticatedError('The token algorithm is not accepted');
  if (err instanceof errors.JWTInvalid || err instanceof errors.JWSInvalid) return new UnauthenticatedError('The bearer token is not a valid JWT');
  return err instanceof Error ? err : new Error(String(err));
}
