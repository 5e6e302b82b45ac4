import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Config } from '../../platform/config';
import { AuthSession, RefreshToken, SigningKey } from './auth.entity';
import { User } from '../organizations/user.entity';
import type { LoginThrottle } from './login-throttle';
import { verifyPassword } from './password';

const ACCESS_TOKEN_SECONDS = 10800;
const REFRESH_TOKEN_SECONDS = 1800;
const SIGNING_ALG = 'RS256';

/** An OAuth 2 error of the token endpoint: `{ error, error_description }` with its status. */
export class OAuthError extends Error {
  constructor(readonly status: 400 | 401, readonly error: string, readonly description: string) {
    super(description);
  }
}

export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
  token_type: 'Bearer';
  'not-before-policy': number;
  session_state: string;
  scope: string;
}

export interface TokenRequest {
  grant_type?: string;
  client_id?: string;
  username?: string;
  password?: string;
  scope?: string;
  refresh_token?: string;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('base64url');

/**
 * The built-in development identity provider: password and refresh-token grants, signing keys kept in
 * the database and rotatable. Its tokens are verified like any external provider's (token-verifier.ts).
 */
export class IdentityProviderService {
  /** `throttle`: brute-force protection of the password grant; only the token endpoint needs it. */
  constructor(private readonly em: EntityManager, private readonly config: Config, private readonly throttle: LoginThrottle | null = null) {}

  /** Answers POST /auth/token. */
  async token(req: TokenRequest, clientIp: string): Promise<TokenResponse> {
    if (!req.client_id || req.client_id !== this.config.auth.clientId) {
      throw new OAuthError(401, 'invalid_client', 'Unknown client_id');
    }
    // PostgreSQL text cannot hold U+0000: refused here rather than failing in a query (a 500).
    const withNul = Object.entries(req).find(([, v]) => typeof v === 'string' && v.includes('\u0000'));
    if (withNul) throw new OAuthError(400, 'invalid_request', `${withNul[0]} must not contain NUL characters`);
    if (req.grant_type === 'password') return this.passwordGrant(req, clientIp);
    if (req.grant_type === 'refresh_token') return this.refreshGrant(req, clientIp);
    throw new OAuthError(400, 'unsupported_grant_type', 'grant_type must be password or refresh_token');
  }

  private async passwordGrant(req: TokenRequest, clientIp: string): Promise<TokenResponse> {
    if (!req.username || !req.password) throw new OAuthError(400, 'invalid_request', 'username and password are required');
    if (!req.scope || !req.scope.trim()) throw new OAuthError(400, 'invalid_request', 'scope is required');
    // Counted before the password is checked, so that concurrent guesses cannot pass the limit (429 when spent).
    const attempt = await this.throttle?.attempt(req.username, clientIp);
    let user: User | null;
    let ok: boolean;
    try {
      user = await this.em.findOne(User, { email: req.username.trim().toLowerCase() });
      // Verify against a dummy hash for unknown users too, so timing does not tell which accounts exist.
      ok = await verifyPassword(req.password, user?.passwordHash ?? DUMMY_HASH);
    } catch (err) {
      // A database outage is no failed sign-in: retries during it must not lock the user out.
      await attempt?.unchecked();
      throw err;
    }
    if (!user || !user.passwordHash || !ok) throw new OAuthError(401, 'invalid_grant', 'Invalid user credentials');
    await attempt?.succeeded();
    const scope = req.scope.trim().split(/\s+/).join(' ');
    const session = this.em.create(AuthSession, { user, scope, clientIp });
    return this.issue(user, session, clientIp);
  }

  private async refreshGrant(req: TokenRequest, clientIp: string): Promise<TokenResponse> {
    if (!req.refresh_token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required');
    const tokenHash = hashToken(req.refresh_token);
    // Refusals are returned, not thrown, so that a reuse's revocation of the session is committed.
    const outcome = await this.em.transactional(async (em): Promise<TokenResponse | OAuthError> => {
      // Row lock: of concurrent uses of one token, the first wins and the others see it used.
      const stored = await em.findOne(RefreshToken, { tokenHash }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!stored) return new OAuthError(400, 'invalid_grant', 'Invalid refresh token');
      await em.populate(stored, ['session.user']);
      const session = stored.session;
      if (stored.usedAt) {
        // A refresh token used twice was stolen or replayed: end the whole session.
        session.revokedAt ??= new Date();
        await em.flush();
        return new OAuthError(400, 'invalid_grant', 'Refresh token already used; the session is revoked');
      }
      if (session.revokedAt) return new OAuthError(400, 'invalid_grant', 'Session revoked');
      if (stored.expiresAt.getTime() <= Date.now()) return new OAuthError(400, 'invalid_grant', 'Refresh token expired');
      if (!session.user.passwordHash) return new OAuthError(400, 'invalid_grant', 'The account can no longer sign in');
      stored.usedAt = new Date();
      return new IdentityProviderService(em, this.config, this.throttle).issue(session.user, session, clientIp);
    });
    if (outcome instanceof OAuthError) throw outcome;
    return outcome;
  }

  private async issue(user: User, session: AuthSession, clientIp: string): Promise<TokenResponse> {
    const key = await this.activeKey();
    const now = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT({
      scope: session.scope,
      azp: this.config.auth.clientId,
      sid: session.id,
      session_state: session.id,
      email: user.email,
      preferred_username: user.email,
      client_ip: clientIp,
      typ: 'Bearer',
    })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' })
      .setIssuer(this.config.auth.issuer)
      .setAudience(this.config.auth.clientId)
      .setSubject(user.id)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + ACCESS_TOKEN_SECONDS)
      .setJti(randomUUID())
      .sign(await importJWK(key.privateJwk as JWK, SIGNING_ALG));
    const refreshToken = randomBytes(32).toString('base64url');
    this.em.create(RefreshToken, {
      session,
      tokenHash: hashToken(refreshToken),
      expiresAt: new Date((now + REFRESH_TOKEN_SECONDS) * 1000),
    });
    await this.em.flush();
    return {
      access_token: accessToken,
      expires_in: ACCESS_TOKEN_SECONDS,
      refresh_token: refreshToken,
      refresh_expires_in: REFRESH_TOKEN_SECONDS,
      token_type: 'Bearer',
      'not-before-policy': 0,
      session_state: session.id,
      scope: session.scope,
    };
  }

  /** The key new tokens are signed with; made on first use. */
  private async activeKey(): Promise<SigningKey> {
    const key = await this.em.findOne(SigningKey, { retiredAt: null }, { orderBy: { createdAt: 'desc' } });
    return key ?? this.rotateSigningKey();
  }

  /** Retires the current signing key and makes a new one; tokens signed before stay valid. */
  async rotateSigningKey(): Promise<SigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = randomUUID();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    return this.em.transactional(async (em) => {
      await em.nativeUpdate(SigningKey, { retiredAt: null }, { retiredAt: new Date() });
      return em.create(SigningKey, { kid, publicJwk, privateJwk });
    });
  }

  /** GET /auth/jwks: the verification keys, the signing key made first when there is none yet. */
  async jwks(): Promise<{ keys: JWK[] }> {
    let keys = await this.liveKeys();
    if (!keys.some((k) => !k.retiredAt)) keys = [await this.activeKey(), ...keys];
    return { keys: keys.map((k) => k.publicJwk as JWK) };
  }

  /** The public keys tokens are verified against (in process, token-verifier.ts); never makes one. */
  async verificationKeys(): Promise<{ keys: JWK[] }> {
    return { keys: (await this.liveKeys()).map((k) => k.publicJwk as JWK) };
  }

  /** Keys that may still have live tokens: the active one and those retired within a token lifetime. */
  private liveKeys(): Promise<SigningKey[]> {
    const since = new Date(Date.now() - (ACCESS_TOKEN_SECONDS + 600) * 1000);
    return this.em.find(SigningKey, { $or: [{ retiredAt: null }, { retiredAt: { $gt: since } }] }, { orderBy: { createdAt: 'desc' } });
  }

  /** The OpenID discovery document. */
  discovery(): Record<string, unknown> {
    const issuer = this.config.auth.issuer;
    return {
      issuer,
      token_endpoint: `${issuer}/auth/token`,
      jwks_uri: `${issuer}/auth/jwks`,
      grant_types_supported: ['password', 'refresh_token'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [SIGNING_ALG],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: [this.config.auth.scope, 'email', 'profile'],
    };
  }
}

// scrypt hash of a random password nobody knows, checked when the user does not exist.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$' + Buffer.alloc(64).toString('base64');
