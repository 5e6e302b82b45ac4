import { SignJWT, decodeJwt, decodeProtectedHeader, importJWK, type JWK, type JWTPayload } from 'jose';
import type { MikroORM } from '@mikro-orm/postgresql';
import { SigningKey } from '../../src/modules/entities';

/**
 * Re-signs a real token of the development provider with the provider's own stored key after changing
 * some claims: the signature is valid, so a refusal can only come from the changed claim.
 */
export async function resignWithProviderKey(orm: MikroORM, token: string, change: (claims: JWTPayload) => JWTPayload): Promise<string> {
  const { kid } = decodeProtectedHeader(token);
  const key = await orm.em.fork().findOneOrFail(SigningKey, { kid });
  const claims = change({ ...decodeJwt(token) });
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid })
    .sign(await importJWK(key.privateJwk as JWK, 'RS256'));
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Another base64url character, for altering one position of a token segment. */
export function otherChar(c: string, flip = 1): string {
  return B64URL[(B64URL.indexOf(c) ^ flip) & 63];
}

/** The token with one character of its signature changed, in the middle (every bit there counts). */
export function alterSignature(token: string): string {
  const [h, p, s] = token.split('.');
  const i = Math.floor(s.length / 2);
  return `${h}.${p}.${s.slice(0, i)}${otherChar(s[i], 32)}${s.slice(i + 1)}`;
}

/** The token with its payload replaced (claims changed), the original signature kept. */
export function alterPayload(token: string, change: (claims: JWTPayload) => JWTPayload): string {
  const [h, , s] = token.split('.');
  const payload = Buffer.from(JSON.stringify(change({ ...decodeJwt(token) }))).toString('base64url');
  return `${h}.${payload}.${s}`;
}
