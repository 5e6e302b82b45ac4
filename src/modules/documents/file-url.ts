import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../platform/config';
import { boundQuery } from '../../platform/database/bound-query';
import { ForbiddenError, NotFoundError } from '../../platform/errors/errors';
import { isUuid } from '../../platform/database/uuid';

/** How long a download URL stays valid (decisions.md section 4). */
export const DOWNLOAD_URL_TTL_SECONDS = 15 * 60;

const SECRET_NAME = 'download_url';

/**
 * The key download URLs are signed with when DOWNLOAD_URL_SECRET is not set: 32 random bytes kept in the
 * database, created by whichever instance starts first and read by every other one, so that a URL signed by
 * one instance verifies on all of them, and after restarts (docs/decisions.md, "Several instances").
 */
export async function sharedDownloadUrlSecret(em: EntityManager): Promise<Buffer> {
  // Instances starting together: one insert wins, every one reads the winner's row. The key is a bound parameter.
  await boundQuery(em, 'insert into service_secret (name, secret) values (?, ?) on conflict (name) do nothing', [SECRET_NAME, randomBytes(32)]);
  const [row] = await boundQuery<{ secret: Buffer }>(em, 'select secret from service_secret where name = ?', [SECRET_NAME]);
  return row.secret;
}

function secretOf(config: Config): Buffer | string {
  if (config.downloadUrlSecret === null) throw new Error('The download URL secret was not loaded (createApp loads it)');
  return config.downloadUrlSecret;
}

/** HMAC-SHA256 of the file id and the expiry time (unix seconds), base64url. */
function fileSignature(config: Config, fileId: string, expires: number): string {
  return createHmac('sha256', secretOf(config)).update(`${fileId.toLowerCase()}\n${expires}`).digest('base64url');
}

export interface SignedFileUrl {
  url: string;
  expiresAt: Date;
}

/** An absolute URL the service serves the file at, without a bearer token, until `expiresAt`. */
export function signedFileUrl(config: Config, fileId: string, expiresAt = new Date(Date.now() + DOWNLOAD_URL_TTL_SECONDS * 1000)): SignedFileUrl {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  const id = fileId.toLowerCase();
  return {
    url: `${config.publicUrl}/files/${id}?expires=${expires}&signature=${fileSignature(config, id, expires)}`,
    expiresAt: new Date(expires * 1000),
  };
}

/**
 * The one form of the URLs signedFileUrl writes. An HMAC over the parsed values would also accept the same
 * values written otherwise (`expires=0001...`, `+1...`, `1e9`, a parameter repeated or added, an upper-case
 * id): such a URL is not one the service gave, so it is altered, like any other change.
 */
const CANONICAL_QUERY = /^expires=([1-9]\d{0,11})&signature=([A-Za-z0-9_-]{43})$/;

/**
 * Throws 403 unless the URL is exactly one the service signed (`fileId` and `query` as they came, not
 * decoded) and its expiry is not past.
 */
function verifyFileUrl(config: Config, fileId: string, query: string, now = new Date()): void {
  const altered = new ForbiddenError('The download link is not valid');
  const m = CANONICAL_QUERY.exec(query);
  if (!m || !isUuid(fileId) || fileId !== fileId.toLowerCase()) throw altered;
  const expires = Number(m[1]);
  const expected = Buffer.from(fileSignature(config, fileId, expires));
  const given = Buffer.from(m[2]);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw altered;
  if (expires * 1000 <= now.getTime()) throw new ForbiddenError('The download link has expired');
}

export interface StoredFile {
  name: string;
  contentType: string;
  content: Buffer;
}

/**
 * The file a signed URL names, read from the service's file storage. The signature is checked before
 * anything is read; the file may since have gone with its template (404).
 */
export async function readSignedFile(em: EntityManager, config: Config, fileId: string, query: string): Promise<StoredFile> {
  verifyFileUrl(config, fileId, query);
  const [row] = await em.execute<Array<{ name: string; content_type: string; content: Buffer }>>(
    'select name, content_type, content from document_file where id = ?', [fileId],
  );
  if (!row) throw new NotFoundError('File not found');
  return { name: row.name, contentType: row.content_type, content: row.content };
}
