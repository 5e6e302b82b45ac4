import { randomBytes, randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { DEMO_IDS } from '../src/seed/demo-data';
import { signedFileUrl } from '../src/modules/documents/file-url';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { rawRequest, type RawResponse } from './support/http';

let t: TestApp;
let architect: string;
let other: string;

const P = '/api/svc/v1';
const OPENAPI = `${P}/openapi.json`;
const BUNDLE = `${P}/docs/swagger-ui-bundle.js`;
const PROJECT = `${P}/projects/${DEMO_IDS.projects.residence}`;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

const get = (path: string, headers: Record<string, string> = {}, token?: string) => rawRequest(`${t.url}${path}`, { headers, token });

/** The body as the client reads it once the content coding is undone. */
function decoded(res: RawResponse): Buffer {
  switch (res.headers['content-encoding']) {
    case 'br': return brotliDecompressSync(res.body);
    case 'gzip': return gunzipSync(res.body);
    case undefined: return res.body;
    default: throw new Error(`unexpected content coding ${res.headers['content-encoding']}`);
  }
}

const varyOf = (res: RawResponse) => String(res.headers.vary ?? '').split(/\s*,\s*/).filter(Boolean);

/** Stores a file of a demo document version and signs its URL, as the download operation (#16) would. */
async function storedFile(name: string, contentType: string, content: Buffer): Promise<string> {
  const em = t.orm.em.fork();
  const [version] = await em.getConnection().execute<Array<{ id: string }>>('select id from document_version order by id limit 1');
  const id = randomUUID();
  await em.getConnection().execute(
    'insert into document_file (id, created_at, updated_at, version_id, name, content_type, size, content) values (?, now(), now(), ?, ?, ?, ?, ?)',
    [id, version.id, name, contentType, content.length, content],
  );
  return signedFileUrl(t.config, id).url;
}

describe('compression (koa-compress)', () => {
  it('compresses JSON of 1 KiB or more with brotli or gzip as the client accepts, and leaves it alone otherwise', async () => {
    const plain = await get(OPENAPI);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    const br = await get(OPENAPI, { 'Accept-Encoding': 'gzip, deflate, br' });
    const gzip = await get(OPENAPI, { 'Accept-Encoding': 'gzip' });
    expect([br.headers['content-encoding'], gzip.headers['content-encoding']]).toEqual(['br', 'gzip']);
    expect(decoded(br).equals(plain.body)).toBe(true);
    expect(decoded(gzip).equals(plain.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plain.body.length / 4);
    for (const res of [plain, br, gzip]) expect(varyOf(res)).toContain('Accept-Encoding');
  });

  it('offers neither zstd nor deflate, so every Node line answers alike', async () => {
    const res = await get(OPENAPI, { 'Accept-Encoding': 'zstd, deflate' });
    expect(res.headers['content-encoding']).toBeUndefined();
  });

  it('leaves bodies under 1 KiB uncompressed', async () => {
    const res = await get('/healthz', { 'Accept-Encoding': 'br, gzip' });
    expect([res.status, res.headers['content-encoding'], JSON.parse(res.body.toString()).status]).toEqual([200, undefined, 'ok']);
    expect(res.body.length).toBeLessThan(1024);
  });

  it('compresses the reference page\'s script, streamed from disk', async () => {
    const plain = await get(BUNDLE);
    const br = await get(BUNDLE, { 'Accept-Encoding': 'br' });
    expect(plain.body.length).toBeGreaterThan(1_000_000);
    expect(br.headers['content-encoding']).toBe('br');
    expect(decoded(br).equals(plain.body)).toBe(true);
    expect(br.headers['content-type']).toMatch(/^application\/javascript/);
  });

  it('compresses authenticated REST and GraphQL answers too', async () => {
    const rest = await get(`${P}/projects`, { 'Accept-Encoding': 'gzip' }, architect);
    expect([rest.status, rest.headers['content-encoding']]).toEqual([200, 'gzip']);
    expect(decoded(rest).equals((await get(`${P}/projects`, {}, architect)).body)).toBe(true);
    // Ten aliases of the trade lists: a GraphQL answer above the threshold.
    const query = `{ ${Array.from({ length: 10 }, (_, i) => `l${i}: tradeLists { id name }`).join(' ')} }`;
    const graphql = await rawPost('/graphql', { query }, { 'Accept-Encoding': 'br' }, architect);
    expect([graphql.status, graphql.headers['content-encoding']]).toEqual([200, 'br']);
    expect(JSON.parse(decoded(graphql).toString()).data.l9.length).toBeGreaterThan(0);
  });
});

describe('signed downloads (/files/...) under compression and ETags', () => {
  it('serves an already compressed type (PDF) byte for byte, without content coding or ETag', async () => {
    const content = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3 * 1024 * 1024)]);
    const res = await rawRequest(await storedFile('big.pdf', 'application/pdf', content), { headers: { 'Accept-Encoding': 'br, gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['content-length']).toBe(String(content.length));
    expect(res.body.equals(content)).toBe(true);
    expect(res.headers['cache-control']).toBe('private, no-store');
  });

  it('compresses a large text file, which the client gets back exactly, without an ETag', async () => {
    const content = Buffer.from('lot;designation;quantite;prix\n'.repeat(100_000));
    const res = await rawRequest(await storedFile('big.csv', 'text/csv', content), { headers: { 'Accept-Encoding': 'gzip' } });
    expect([res.status, res.headers['content-encoding'], res.headers.etag]).toEqual([200, 'gzip', undefined]);
    expect(decoded(res).equals(content)).toBe(true);
    expect(res.body.length).toBeLessThan(content.length / 10);
  });
});

describe('ETag and conditional GET', () => {
  it('tags GET reads with a weak ETag and answers 304 without a body when If-None-Match names it', async () => {
    for (const [path, token] of [[OPENAPI, undefined], [PROJECT, architect]] as const) {
      const first = await get(path, {}, token);
      expect(first.status).toBe(200);
      expect(first.headers.etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/=]+"$/);
      const again = await get(path, { 'If-None-Match': first.headers.etag! }, token);
      expect([again.status, again.body.length, again.headers.etag]).toEqual([304, 0, first.headers.etag]);
      // A client that sends the tag with Cache-Control: no-cache, as fetch() does, still gets its 304.
      expect((await get(path, { 'If-None-Match': first.headers.etag!, 'Cache-Control': 'no-cache' }, token)).status).toBe(304);
      expect((await get(path, { 'If-None-Match': 'W/"stale"' }, token)).status).toBe(200);
    }
  });

  it('gives one ETag to a body whatever its content coding, and answers 304 to a compressed client', async () => {
    const plain = await get(OPENAPI);
    const br = await get(OPENAPI, { 'Accept-Encoding': 'br' });
    expect(br.headers.etag).toBe(plain.headers.etag);
    const again = await get(OPENAPI, { 'Accept-Encoding': 'br', 'If-None-Match': String(plain.headers.etag) });
    expect([again.status, again.headers['content-encoding'], again.body.length]).toEqual([304, undefined, 0]);
  });

  it('answers If-None-Match: * with 304 on a GET of an existing representation (RFC 9110 section 13.1.2)', async () => {
    expect((await get(OPENAPI, { 'If-None-Match': '*' })).status).toBe(304);
    expect((await get(PROJECT, { 'If-None-Match': '*' }, architect)).status).toBe(304);
  });

  it('keeps errors as they are: If-None-Match: * on an unknown project is still 404, without a token still 401', async () => {
    const missing = await get(`${P}/projects/${randomUUID()}`, { 'If-None-Match': '*' }, architect);
    expect([missing.status, missing.headers.etag]).toEqual([404, undefined]);
    expect((await get(PROJECT, { 'If-None-Match': '*' })).status).toBe(401);
  });

  it('tags the reference page\'s script from its file and answers 304', async () => {
    const first = await get(BUNDLE);
    expect(first.headers.etag).toMatch(/^W\/"/);
    expect(first.headers['cache-control']).toBe('public, max-age=86400');
    expect((await get(BUNDLE, { 'If-None-Match': first.headers.etag! })).status).toBe(304);
  });

  it('tags GraphQL queries sent by GET and answers 304; POST answers are never 304 and keep their status', async () => {
    const query = `/graphql?query=${encodeURIComponent('{ me { id email } }')}`;
    const first = await get(query, { Accept: 'application/json' }, architect);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body.toString()).data.me.email).toBe('architect@demo.test');
    const again = await get(query, { Accept: 'application/json', 'If-None-Match': String(first.headers.etag) }, architect);
    expect(again.status).toBe(304);
    const post = await rawPost('/graphql', { query: '{ me { id } }' }, { 'If-None-Match': '*' }, architect);
    expect([post.status, post.headers.etag]).toEqual([200, undefined]);
    const invalid = await rawPost('/graphql', { query: '{ me {' }, { 'Accept-Encoding': 'gzip' }, architect);
    expect(invalid.status).toBe(400);
    expect(JSON.parse(decoded(invalid).toString()).errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('Vary and Cache-Control', () => {
  it('marks every answer that depends on the caller Vary: Authorization and Cache-Control: private, no-cache', async () => {
    const rest = await get(PROJECT, {}, architect);
    const graphql = await get(`/graphql?query=${encodeURIComponent('{ me { id } }')}`, { Accept: 'application/json' }, architect);
    const refused = await get(PROJECT);
    for (const res of [rest, graphql, refused]) {
      expect([res.status, varyOf(res), res.headers['cache-control']]).toEqual([res.status, expect.arrayContaining(['Authorization', 'Accept-Encoding']), 'private, no-cache']);
    }
    expect(refused.status).toBe(401);
  });

  it('gives two callers different ETags for the same URL', async () => {
    const a = await get('/graphql?query=%7Bme%7Bid%7D%7D', { Accept: 'application/json' }, architect);
    const b = await get('/graphql?query=%7Bme%7Bid%7D%7D', { Accept: 'application/json' }, other);
    expect(a.headers.etag).not.toBe(b.headers.etag);
  });

  it('leaves public documents without Vary: Authorization', async () => {
    for (const path of [OPENAPI, BUNDLE, '/auth/jwks']) {
      const res = await get(path, {}, architect);
      // `Origin` is CORS's (every answer depends on it); nothing here depends on the caller.
      expect([path, res.status, varyOf(res)]).toEqual([path, 200, ['Origin', 'Accept-Encoding']]);
    }
  });
});

/** A JSON POST through node:http. */
const rawPost = (path: string, body: unknown, headers: Record<string, string>, token: string) =>
  rawRequest(`${t.url}${path}`, { method: 'POST', token, body: JSON.stringify(body), headers: { ...headers, 'Content-Type': 'application/json' } });
