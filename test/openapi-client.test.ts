import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEMO_IDS, DEMO_SIRETS, DEMO_USERS } from '../src/seed/demo-data';
import { tour } from '../examples/rest/client';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { assertDocumentedResponse, OPENAPI_FILE } from './support/openapi-responses';

const root = path.resolve(__dirname, '..');
const run = promisify(execFile);
const GENERATED = path.join(root, 'examples/rest/generated/openapi.ts');
const CLIENT = path.join(root, 'examples/rest/client.ts');

describe('examples/rest (a client generated from the OpenAPI document with openapi-typescript and openapi-fetch)', () => {
  let fresh: string;
  beforeAll(() => {
    fresh = mkdtempSync(path.join(tmpdir(), 'openapi-client-'));
  });
  afterAll(() => rmSync(fresh, { recursive: true, force: true }));

  it('holds the types openapi-typescript generates from openapi.json now (run `npm run openapi:print` after an API change)', async () => {
    await run(process.execPath, [path.join(root, 'node_modules/openapi-typescript/bin/cli.js'), OPENAPI_FILE, '-o', path.join(fresh, 'openapi.ts')], { cwd: root, timeout: 60_000 });
    expect(readFileSync(GENERATED, 'utf8')).toEqual(readFileSync(path.join(fresh, 'openapi.ts'), 'utf8'));
  }, 90_000);

  it('compiles under `tsc --strict` with no error, reading the fields of every answer', async () => {
    const tsc = run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--skipLibCheck',
      '--target', 'ES2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', CLIENT], { cwd: root, timeout: 120_000 });
    await expect(tsc.then(({ stdout }) => stdout)).resolves.toBe('');
    // No way around the types: no cast, no non-null assertion, no any.
    const source = readFileSync(CLIENT, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    expect(source).not.toMatch(/\bas\s+(?!const\b)\w|!\.|!\[|:\s*any\b/);
  }, 150_000);

  it('calls every operation of the document', () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const documented = Object.entries(doc.paths).flatMap(([p, item]) => ['get', 'post', 'put', 'delete'].filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${p}`))
      .filter((op) => op !== 'POST /auth/token');
    const called = [...readFileSync(CLIENT, 'utf8').matchAll(/api\.(GET|POST|PUT|DELETE)\('([^']+)'/g)].map((m) => `${m[1]} ${m[2]}`);
    // The 35 interface operations (#16 as two), the two leveling paths of issue 13 and the nine webhook operations of issue 26.
    expect(documented).toHaveLength(47);
    expect([...new Set(called)].sort()).toEqual(documented.sort());
  });

  describe('against the service, over the demo data', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(() => t.close());

    /** fetch, checking each answer against the document as test/support/http.ts does. */
    const checkedFetch: typeof fetch = async (input, init) => {
      const req = input instanceof Request ? input : new Request(input, init);
      const res = await fetch(req);
      const text = await res.clone().text();
      const body = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
      assertDocumentedResponse(req.method, req.url, res.status, res.headers, body);
      return res;
    };

    it('every call answers as the document says, with the demo data\'s values', async () => {
      const token = await tokenFor(t.url, DEMO_USERS.architect);
      const read = await tour(t.url, token, {
        projectId: DEMO_IDS.projects.residence,
        templateId: DEMO_IDS.templates.residenceGrosOeuvre,
        documentId: DEMO_IDS.documents.residenceGoDurand,
        contractorId: DEMO_IDS.contractors.batimentsDurand,
        userId: DEMO_IDS.users.architect,
        organizationId: DEMO_IDS.organizations.atelierDemo,
        tradeListId: DEMO_IDS.tradeLists.standard,
        tradeListTradeId: DEMO_IDS.tradeListTrades.standard['01'],
        siret: DEMO_SIRETS.shared,
        webhookUrl: `${t.url}/webhook-sink`,
      }, checkedFetch);
      expect(read).toMatchObject({
        project: { id: DEMO_IDS.projects.residence, legacyId: expect.stringMatching(/^.{17}$/), manager: DEMO_USERS.architect, vat: 20 },
        created: { name: 'Client tour', archived: true, archivedAt: expect.any(String) },
        templates: { trade: 'Gros œuvre', total: expect.any(Number) },
        detail: { name: 'Gros œuvre', mandate: expect.stringMatching(/^(true|false)$/) },
        invited: [{ email: 'contact@serrurerie-blanc.fr', state: 'PENDING', intention: null }],
        deleted: [204, 204],
        identifiers: { uuid: DEMO_IDS.projects.residence, legacy: expect.stringMatching(/^.{17}$/) },
        roles: { removed: 204 },
        companies: { contacts: [2, 1] },
        credits: { scope: 'organization' },
        webhooks: { listed: [`${t.url}/webhook-sink`], secret: 'whsec_', rotated: true, description: 'ERP', test: 'webhook.test', attempted: true, redelivered: true, enabled: true, deleted: 204 },
      });
    });
  });
});
