import http from 'node:http';
import { DEMO_IDS } from '../../seed/demo-data';
import { DOWNLOAD_URL_TTL_SECONDS, signedFileUrl } from './file-url';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { tokenFor } from '../../../test/support/auth';
import { request } from '../../../test/support/http';

let t: TestApp;
let architect: string;
let other: string;

const P = '/api/svc/v1';
const { projects: PRJ, templates: TPL, documents: DOC } = DEMO_IDS;
const UNKNOWN = '0b0b0b0b-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
  other = await tokenFor(t.url, 'other@demo.test');
});
afterAll(() => t.close());

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return t.orm.em.fork().getConnection().execute<T[]>(query, params);
}

const downloadPath = (projectId: string, templateId: string, documentId: string, version?: string, prefix = P) =>
  `${prefix}/projects/${projectId}/templates/${templateId}/documents/${documentId}/download${version === undefined ? '' : `/${version}`}`;
const download = (projectId: string, templateId: string, documentId: string, version?: string, token = architect) =>
  request(t.url, 'GET', downloadPath(projectId, templateId, documentId, version), { token });

/** Stored files of a document version, in the order the service lists them. */
const storedFiles = (documentId: string, version: number) => sql<{ id: string; name: string; size: number; content: Buffer }>(`
  select f.id, f.name, f.size, f.content from document_file f join document_version v on v.id = f.version_id
  where v.document_id = ? and v.version = ? order by f.created_at, f.name, f.id`, [documentId, version]);

/** Fetches a URL as bytes, without any token. */
async function fetchBytes(url: string): Promise<{ status: number; headers: Headers; bytes: Buffer; text: string }> {
  const res = await fetch(url);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
}

describe('GET /api/svc/v1/projects/{projectId}/templates/{templateId}/documents/{documentId}/download/{version} (#16)', () => {
  describe('without a version', () => {
    it('lists the document\'s versions with their status, sending time and files', async () => {
      const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoDurand);
      expect(res.status).toBe(200);
      const v1 = await storedFiles(DOC.residenceGoDurand, 1);
      const v2 = await storedFiles(DOC.residenceGoDurand, 2);
      expect(res.body).toEqual({ versions: [
        { version: 1, status: 'ANSWERED', sent_at: '2026-10-06T16:20:00.000000Z', files: [{ name: 'DPGF-lot-01.pdf', size: v1[0].size }] },
        { version: 2, status: 'ANSWERED', sent_at: '2026-10-27T11:05:00.000000Z', files: v2.map((f) => ({ name: f.name, size: f.size })) },
      ] });
      expect(res.body.versions[1].files.map((f: { name: string }) => f.name).sort()).toEqual(['DPGF-lot-01.pdf', 'Memoire-technique.pdf']);
      expect(v1[0].size).toBeGreaterThan(0);
    });

    it('lists a draft with a null sent_at and a version without files with an empty list', async () => {
      const draft = await download(PRJ.residence, TPL.residenceGrosOeuvreTranche2, DOC.residenceTranche2Moreau);
      expect(draft.body).toEqual({ versions: [{ version: 1, status: 'DRAFT', sent_at: null, files: [] }] });
      const moreau = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoMoreau);
      expect(moreau.body.versions.map((v: { version: number; status: string; files: unknown[] }) => [v.version, v.status, v.files.length])).toEqual([[1, 'ANSWERED', 1], [2, 'IN_REVISION', 0]]);
    });

    it('answers an empty list for a document without versions', async () => {
      const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoDurandRenovation);
      expect(res.body).toEqual({ versions: [] });
    });

    it('answers the same body under /svc/v1, also for an archived project', async () => {
      const api = await download(PRJ.archivedHouse, TPL.archivedHouseGrosOeuvre, DOC.archivedHouseGoPetit);
      const alias = await request(t.url, 'GET', downloadPath(PRJ.archivedHouse, TPL.archivedHouseGrosOeuvre, DOC.archivedHouseGoPetit, undefined, '/svc/v1'), { token: architect });
      expect(api.status).toBe(200);
      expect(api.body.versions).toHaveLength(1);
      expect(alias.body).toEqual(api.body);
    });
  });

  describe('with a version', () => {
    it('gives each file of the version a signed absolute URL that expires after 15 minutes', async () => {
      const before = Date.now();
      const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoDurand, '2');
      expect(res.status).toBe(200);
      const stored = await storedFiles(DOC.residenceGoDurand, 2);
      expect(Object.keys(res.body)).toEqual(['files']);
      expect(res.body.files.map((f: { name: string }) => f.name)).toEqual(stored.map((f) => f.name));
      for (const [i, file] of res.body.files.entries()) {
        expect(Object.keys(file)).toEqual(['name', 'url', 'expires_at']);
        expect(file.url).toMatch(new RegExp(`^${t.url}/files/${stored[i].id}\\?expires=\\d+&signature=[A-Za-z0-9_-]+$`));
        expect(file.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
        const expires = Date.parse(file.expires_at);
        expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + DOWNLOAD_URL_TTL_SECONDS * 1000);
        expect(expires).toBeLessThanOrEqual(Date.now() + DOWNLOAD_URL_TTL_SECONDS * 1000);
        expect(new URL(file.url).searchParams.get('expires')).toBe(String(expires / 1000));
      }
    });

    it('serves the file content at the signed URL, without a token, with its type and name', async () => {
      const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoPetit, '1');
      const stored = await storedFiles(DOC.residenceGoPetit, 1);
      expect(res.body.files.map((f: { name: string }) => f.name).sort()).toEqual(['Bordereau-prix-lot-01.csv', 'DPGF-lot-01.pdf']);
      for (const file of res.body.files) {
        const served = await fetchBytes(file.url);
        const original = stored.find((s) => s.name === file.name)!;
        expect(served.status).toBe(200);
        expect(served.bytes.equals(original.content)).toBe(true);
        expect(served.bytes.length).toBe(original.size);
        expect(served.headers.get('content-type')).toContain(file.name.endsWith('.csv') ? 'text/csv' : 'application/pdf');
        expect(served.headers.get('content-disposition')).toBe(`attachment; filename="${file.name}"; filename*=UTF-8''${file.name}`);
      }
    });

    it('answers an empty file list for a version without files', async () => {
      const res = await download(PRJ.residence, TPL.residenceCharpente, DOC.residenceCharpenteDurand, '1');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ files: [] });
    });

    it('answers under /svc/v1 too', async () => {
      const res = await request(t.url, 'GET', downloadPath(PRJ.nordOffices, TPL.nordOfficesElectricite, DOC.nordElecMartin, '1', '/svc/v1'), { token: architect });
      expect(res.status).toBe(200);
      expect(res.body.files.map((f: { name: string }) => f.name)).toEqual(['DPGF-lot-06.pdf']);
      expect((await fetchBytes(res.body.files[0].url)).status).toBe(200);
    });

    it('answers 404 for a version the document does not have', async () => {
      for (const version of ['3', '99', '2147483648', '99999999999999999999']) {
        const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoDurand, version);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ code: 404, message: 'Version not found' });
      }
    });

    it.each(['0', 'abc', '1.5', '-1', '01'])('answers 400 when the version is %p', async (version) => {
      const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoDurand, version);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 400, message: 'The request is not valid', errors: [{ field: 'version', message: 'must be a positive whole number' }] });
    });
  });

  it('answers 400 for malformed ids', async () => {
    const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, 'doc-1');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'documentId', message: 'must be a UUID' }]);
  });

  it('answers 404 for an unknown document, a document of another template or project, and another organization\'s document', async () => {
    const unknown = await download(PRJ.residence, TPL.residenceGrosOeuvre, UNKNOWN);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, message: 'Document not found' });
    const otherTemplate = await download(PRJ.residence, TPL.residenceCharpente, DOC.residenceGoDurand, '1');
    expect(otherTemplate.body).toEqual(unknown.body);
    const otherProject = await download(PRJ.school, TPL.residenceGrosOeuvre, DOC.residenceGoDurand);
    expect(otherProject.body).toEqual(unknown.body);
    const foreign = await download(PRJ.cabinetSudHall, TPL.cabinetSudCharpente, DOC.sudCharpenteVercors, '1');
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    const foreignList = await download(PRJ.cabinetSudHall, TPL.cabinetSudCharpente, DOC.sudCharpenteVercors);
    expect(foreignList.body).toEqual(unknown.body);
    const own = await download(PRJ.cabinetSudHall, TPL.cabinetSudCharpente, DOC.sudCharpenteVercors, '1', other);
    expect(own.body.files.map((f: { name: string }) => f.name)).toEqual(['DPGF-lot-02.pdf']);
  });

  it('answers 401 without a token', async () => {
    const res = await request(t.url, 'GET', downloadPath(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoDurand, '1'));
    expect(res.status).toBe(401);
    expect(res.text).not.toContain('/files/');
  });
});

describe('GET /files/{fileId} (signed URLs of #16)', () => {
  let url: URL;
  let fileId: string;

  beforeAll(async () => {
    const res = await download(PRJ.residence, TPL.residenceGrosOeuvre, DOC.residenceGoDurand, '1');
    url = new URL(res.body.files[0].url);
    fileId = url.pathname.split('/').pop()!;
  });

  const altered = (change: (u: URL) => void) => {
    const u = new URL(url);
    change(u);
    return u.toString();
  };

  it('serves the file while the URL is intact', async () => {
    expect((await fetchBytes(url.toString())).status).toBe(200);
  });

  it.each<[string, (u: URL) => void]>([
    ['the signature is altered', (u) => {
      const s = u.searchParams.get('signature')!;
      u.searchParams.set('signature', (s[0] === 'A' ? 'B' : 'A') + s.slice(1));
    }],
    ['the expiry is pushed back', (u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))],
    ['the signature is missing', (u) => u.searchParams.delete('signature')],
    ['the expiry is missing', (u) => u.searchParams.delete('expires')],
    ['the signature is of another length', (u) => u.searchParams.set('signature', `${u.searchParams.get('signature')}x`)],
  ])('answers 403 with the error body when %s', async (_case, change) => {
    const res = await request(altered(change), 'GET', '');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 403, message: 'The download link is not valid' });
  });

  /** The URL as the service wrote it, as a string: a URL object would normalise some of the changes below. */
  const rewritten = (change: (parts: { id: string; expires: string; signature: string }) => string) => {
    const [, id, expires, signature] = /\/files\/([^?]+)\?expires=(\d+)&signature=(.+)$/.exec(url.toString())!;
    return `${url.origin}${change({ id, expires, signature })}`;
  };
  const percent = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`;

  it.each<[string, (p: { id: string; expires: string; signature: string }) => string]>([
    ['leading zeros before the expiry', (p) => `/files/${p.id}?expires=00${p.expires}&signature=${p.signature}`],
    ['a digit of the expiry percent-encoded', (p) => `/files/${p.id}?expires=${percent(p.expires[0])}${p.expires.slice(1)}&signature=${p.signature}`],
    ['a plus sign before the expiry', (p) => `/files/${p.id}?expires=%2B${p.expires}&signature=${p.signature}`],
    ['the expiry written with an exponent', (p) => `/files/${p.id}?expires=${p.expires.slice(0, 1)}.${p.expires.slice(1)}e${p.expires.length - 1}&signature=${p.signature}`],
    ['a character of the signature percent-encoded', (p) => `/files/${p.id}?expires=${p.expires}&signature=${percent(p.signature[0])}${p.signature.slice(1)}`],
    ['the parameters in another order', (p) => `/files/${p.id}?signature=${p.signature}&expires=${p.expires}`],
    ['a parameter repeated with the same value', (p) => `/files/${p.id}?expires=${p.expires}&expires=${p.expires}&signature=${p.signature}`],
    ['an extra parameter', (p) => `/files/${p.id}?expires=${p.expires}&signature=${p.signature}&download=1`],
    ['a trailing ampersand', (p) => `/files/${p.id}?expires=${p.expires}&signature=${p.signature}&`],
    ['the file id in upper case', (p) => `/files/${p.id.toUpperCase()}?expires=${p.expires}&signature=${p.signature}`],
    ['a character of the file id percent-encoded', (p) => `/files/${percent(p.id[0])}${p.id.slice(1)}?expires=${p.expires}&signature=${p.signature}`],
  ])('answers 403 for the URL written otherwise than the service wrote it: %s', async (_case, change) => {
    expect((await fetchBytes(rewritten((p) => `/files/${p.id}?expires=${p.expires}&signature=${p.signature}`))).status).toBe(200);
    const res = await request(rewritten(change), 'GET', '');
    expect([res.status, res.body]).toEqual([403, { code: 403, message: 'The download link is not valid' }]);
  });

  it('answers 403 for the URL sent with a fragment, which fetch and browsers never send', async () => {
    const target = rewritten((p) => `/files/${p.id}?expires=${p.expires}&signature=${p.signature}#`).slice(url.origin.length);
    const status = await new Promise<number>((resolve, reject) => {
      http.get({ host: url.hostname, port: url.port, path: target }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      }).on('error', reject);
    });
    expect(status).toBe(403);
  });

  it('answers 403 when the URL is moved to another file', async () => {
    const [another] = await storedFiles(DOC.residenceGoPetit, 1);
    const res = await request(altered((u) => { u.pathname = `/files/${another.id}`; }), 'GET', '');
    expect(res.status).toBe(403);
    expect(res.text).not.toContain('%PDF');
  });

  it('answers 403 for a URL that is not a file id', async () => {
    const res = await request(t.url, 'GET', `/files/not-a-file${url.search}`);
    expect(res.status).toBe(403);
  });

  it('answers 403 once the URL has expired', async () => {
    const expired = signedFileUrl(t.config, fileId, new Date(Date.now() - 1000));
    const res = await request(expired.url, 'GET', '');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 403, message: 'The download link has expired' });
    // The same helper with a future expiry is accepted: only the time differs.
    expect((await fetchBytes(signedFileUrl(t.config, fileId, new Date(Date.now() + 60000)).url)).status).toBe(200);
  });

  it('answers 404 for a correctly signed URL whose file is gone', async () => {
    const res = await request(signedFileUrl(t.config, UNKNOWN).url, 'GET', '');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, message: 'File not found' });
  });

  it('stops serving when the service signs with another secret', async () => {
    const rotated = { ...t.config, downloadUrlSecret: 'another-secret' };
    expect(signedFileUrl(rotated, fileId).url).not.toBe(signedFileUrl(t.config, fileId, new Date(Number(url.searchParams.get('expires')) * 1000)).url);
    expect((await request(signedFileUrl(rotated, fileId).url, 'GET', '')).status).toBe(403);
  });
});
