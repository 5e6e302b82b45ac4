import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FormattedExecutionResult } from 'graphql';
import { DEMO_IDS } from '../src/seed/demo-data';
import { ConfigError, loadConfig } from '../src/platform/config';
import { readTrustedDocuments } from '../src/platform/graphql/trusted-documents';
import { startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { gql } from './support/graphql';
import { request } from './support/http';
import { startInstanceProcess } from './support/instance-process';
import { wsClient } from './support/subscriptions';
import WebSocket from 'ws';
import { createClient, dashboard, liveDashboard, renameTrade } from '../examples/graphql/client';

/**
 * Trusted documents (docs/trusted-documents.md): the example operations' manifest, as `npm run codegen` writes it
 * (test/codegen.test.ts fails when it is stale), executed by id over POST, GET and WebSocket.
 */

const MANIFEST = path.resolve(__dirname, '../examples/graphql/generated/persisted-documents.json');
const documents = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
/** The manifest id of the operation named `name`. */
const idOf = (name: string) => Object.entries(documents).find(([, doc]) => new RegExp(`^(query|mutation|subscription) ${name}\\b`, 'm').test(doc.replace(/ (query|mutation|subscription) /g, '\n$1 ')))![0];
const UNKNOWN = `sha256:${'0'.repeat(64)}`;

let t: TestApp;
let architect: string;
let other: string;

beforeAll(async () => {
  t = await startTestApp({ GRAPHQL_TRUSTED_DOCUMENTS: MANIFEST, GRAPHQL_TRUSTED_DOCUMENTS_MODE: 'only', GRAPHQL_ARBITRARY_DOCUMENTS_USERS: 'other@demo.test' });
  [architect, other] = await Promise.all([tokenFor(t.url, 'architect@demo.test'), tokenFor(t.url, 'other@demo.test')]);
});
afterAll(() => t.close());

describe('POST /graphql by document id', () => {
  it('runs the manifest\'s document named by documentId, with its variables', async () => {
    const res = await request(t.url, 'POST', '/graphql', { token: architect, body: { documentId: idOf('Dashboard'), variables: { first: 2 } } });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.me.email).toBe('architect@demo.test');
    expect(res.body.data.projects.nodes).toHaveLength(2);
  });

  it('runs it named as Apollo\'s persisted queries name it (extensions.persistedQuery.sha256Hash)', async () => {
    const hash = idOf('Me').replace('sha256:', '');
    const res = await request(t.url, 'POST', '/graphql', { token: architect, body: { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } } });
    expect(res.status).toBe(200);
    expect(res.body.data.me.email).toBe('architect@demo.test');
  });

  it('runs a mutation by id', async () => {
    const res = await request(t.url, 'POST', '/graphql', {
      token: architect, body: { documentId: idOf('CreateProjectTrade'), variables: { projectId: DEMO_IDS.projects.school, input: { name: 'Serrurerie', number: '77', shortName: 'SE' } } },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.createProjectTrade.trade).toMatchObject({ number: '77' });
  });

  it('answers an unknown id with PERSISTED_QUERY_NOT_FOUND (400), never a 500', async () => {
    for (const documentId of [UNKNOWN, 'not-a-hash', 42]) {
      const res = await request(t.url, 'POST', '/graphql', { token: architect, body: { documentId } });
      expect([documentId, res.status, res.body.errors?.[0]?.extensions?.code]).toEqual([documentId, 400, 'PERSISTED_QUERY_NOT_FOUND']);
    }
  });

  it('refuses an id sent with another document (BAD_USER_INPUT)', async () => {
    const res = await request(t.url, 'POST', '/graphql', { token: architect, body: { documentId: idOf('Me'), query: '{ me { id } }' } });
    expect([res.status, res.body.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
  });

  it('refuses an arbitrary document in only mode with TRUSTED_DOCUMENT_REQUIRED, except for the callers allowed', async () => {
    const refused = await gql(t.url, architect, '{ me { id } }');
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions.code).toBe('TRUSTED_DOCUMENT_REQUIRED');
    const allowed = await gql(t.url, other, '{ me { email } }');
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.me.email).toBe('other@demo.test');
  });
});

describe('GET /graphql by document id', () => {
  it('runs a query by documentId and variables in the URL, as a CDN could cache it', async () => {
    const search = new URLSearchParams({ documentId: idOf('Dashboard'), variables: JSON.stringify({ first: 1 }) });
    const res = await request(t.url, 'GET', `/graphql?${search}`, { token: architect });
    expect(res.status).toBe(200);
    expect(res.body.data.projects.nodes).toHaveLength(1);
  });

  it('answers an unknown id with PERSISTED_QUERY_NOT_FOUND, and an arbitrary query with TRUSTED_DOCUMENT_REQUIRED', async () => {
    const unknown = await request(t.url, 'GET', `/graphql?documentId=${UNKNOWN}`, { token: architect });
    expect([unknown.status, unknown.body.errors[0].extensions.code]).toEqual([400, 'PERSISTED_QUERY_NOT_FOUND']);
    const arbitrary = await request(t.url, 'GET', `/graphql?query=${encodeURIComponent('{ me { id } }')}`, { token: architect });
    expect([arbitrary.status, arbitrary.body.errors[0].extensions.code]).toEqual([400, 'TRUSTED_DOCUMENT_REQUIRED']);
  });
});

describe('WebSocket subscriptions by document id', () => {
  it('runs a subscription named by its id, and refuses an unknown id or an arbitrary document', async () => {
    const ws = wsClient(t.url, architect);
    try {
      await ws.connected;
      const subscribeById = (payload: Record<string, unknown>) => new Promise<FormattedExecutionResult | Error>((resolve) => {
        let first = true;
        const stop = ws.client.subscribe(payload as never, {
          next: (result) => {
            if (first) resolve(result as FormattedExecutionResult);
            first = false;
            stop();
          },
          error: (err) => resolve(err as Error),
          complete: () => undefined,
        });
      });
      const template = DEMO_IDS.templates.schoolDemolition;
      const update = subscribeById({ query: '', extensions: { persistedQuery: { version: 1, sha256Hash: idOf('TemplateChanges').replace('sha256:', '') } }, variables: { templateId: template } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await queryRows(t.databaseUrl, 'update template set budget = budget + 1 where id = $1', [template]);
      const result = await update as FormattedExecutionResult<{ templateChanged: { templateId: string } }>;
      expect(result.data?.templateChanged.templateId).toBe(template);

      const unknown = await subscribeById({ query: '', documentId: UNKNOWN });
      expect(JSON.stringify(unknown)).toContain('PERSISTED_QUERY_NOT_FOUND');
      const arbitrary = await subscribeById({ query: 'subscription { templateChanged(templateId: "' + template + '") { templateId } }' });
      expect(JSON.stringify(arbitrary)).toContain('TRUSTED_DOCUMENT_REQUIRED');
    } finally {
      await ws.dispose();
    }
  });
});

describe('Apollo Client sending the example operations by id (examples/graphql/client.ts, trustedDocuments)', () => {
  it('reads the dashboard (a GET by id), writes (a POST by id) and follows changes (WebSocket by id) where only trusted documents run', async () => {
    const requests: Array<{ method: string; body: string; url: string }> = [];
    const recording: typeof fetch = async (input, init) => {
      requests.push({ method: init?.method ?? 'GET', body: typeof init?.body === 'string' ? init.body : '', url: String(input) });
      return fetch(input, init);
    };
    const client = createClient({ url: `${t.url}/graphql`, token: architect, fetch: recording, webSocketImpl: WebSocket, trustedDocuments: true });
    try {
      const board = await dashboard(client, 3);
      expect(board.projects.nodes).toHaveLength(3);
      expect(board.projects.nodes[0].__typename).toBe('Project');
      expect(requests[0].method).toBe('GET');
      expect(requests[0].url).toContain('persistedQuery');
      expect(requests[0].url).not.toContain('query=');

      const school = board.projects.nodes.find((p) => p.id === DEMO_IDS.projects.residence) ?? board.projects.nodes[0];
      const trade = school.trades[0];
      await renameTrade(client, school.id, trade.id, { name: trade.name, number: trade.number, shortName: 'RENAMED', comment: trade.comment });
      const write = requests.find((r) => r.method === 'POST')!;
      expect(JSON.parse(write.body)).not.toHaveProperty('query');

      const updates: string[][] = [];
      const stop = liveDashboard(client, (change) => updates.push(change.changes), [school.id]);
      try {
        await new Promise((resolve) => setTimeout(resolve, 500));
        await queryRows(t.databaseUrl, 'update project set name = name where id = $1', [school.id]);
        for (let i = 0; i < 100 && !updates.length; i++) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(updates.length).toBeGreaterThan(0);
      } finally {
        stop();
      }
    } finally {
      await client.clearStore();
      client.stop();
    }
  });
});

describe('modes and the manifest', () => {
  it('allow mode: ids and arbitrary documents alike', async () => {
    const allow = await startTestApp({ GRAPHQL_TRUSTED_DOCUMENTS: MANIFEST });
    try {
      const token = await tokenFor(allow.url, 'architect@demo.test');
      expect((await gql(allow.url, token, '{ me { id } }')).status).toBe(200);
      expect((await request(allow.url, 'POST', '/graphql', { token, body: { documentId: idOf('Me') } })).body.data.me.email).toBe('architect@demo.test');
    } finally {
      await allow.close();
    }
  });

  it('refuses to start on a manifest whose hash does not match its document, with one line naming it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'trusted-'));
    try {
      const file = path.join(dir, 'persisted-documents.json');
      const [id, doc] = Object.entries(documents)[0];
      writeFileSync(file, JSON.stringify({ [id]: doc.replace('{', '{ __typename ') }));
      // The configuration names the manifest; it is read at start (readTrustedDocuments), not while parsing.
      const settings = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: file }).graphql.trustedDocuments;
      expect(settings).toEqual({ file, mode: 'allow', arbitraryAllowed: [] });
      expect(() => readTrustedDocuments(settings)).toThrow(ConfigError);
      expect(() => readTrustedDocuments(settings)).toThrow(/^GRAPHQL_TRUSTED_DOCUMENTS \(.*\): the document under "sha256:[0-9a-f]{64}" hashes to sha256:[0-9a-f]{64}; regenerate it with `npm run codegen`$/);
      const good = createHash('sha256').update(doc).digest('hex');
      expect(id).toBe(`sha256:${good}`);
      expect(() => loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS_MODE: 'only' })).toThrow('GRAPHQL_TRUSTED_DOCUMENTS_MODE=only needs GRAPHQL_TRUSTED_DOCUMENTS');
      await expect(startInstanceProcess(t.databaseUrl, 'http://127.0.0.1:1', { GRAPHQL_TRUSTED_DOCUMENTS: file }))
        .rejects.toThrow(/exited \(1\) before listening:[\s\S]*Configuration error: GRAPHQL_TRUSTED_DOCUMENTS \(/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
