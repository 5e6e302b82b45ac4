import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { loadConfig } from '../src/platform/config';
import { ALL_ROUTES, openApiDocument } from '../src/modules/rest';
import { routePaths } from '../src/platform/rest/mount';
import { expandOptional, toOpenApiPath } from '../src/platform/rest/openapi';
import { startTestApp, type TestApp } from './support/app';
import { request } from './support/http';
import { assertDocumentedResponse, OPENAPI_FILE } from './support/openapi-responses';

let t: TestApp;
let doc: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(async () => {
  t = await startTestApp();
  doc = (await request(t.url, 'GET', '/api/svc/v1/openapi.json')).body;
});
afterAll(() => t.close());

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const operationsOf = (d: Json): Json[] => Object.values<Json>(d.paths).flatMap((item) => METHODS.map((m) => item[m]).filter(Boolean));
/** Every full path a path item is served at: its key under each of its servers. */
const servedAt = (d: Json, key: string): string[] => [
  ...((d.paths[key].servers ?? d.servers) as Json[]).map((s) => s.url.replace(/\/$/, '') + key),
  ...(d.paths[key]['x-also-served-at'] ? [d.paths[key]['x-also-served-at']] : []),
];

describe('GET /api/svc/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, version 1.0.0, served without a token', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('is openapi.json, committed (run `npm run openapi:print` after an API change)', () => {
    expect(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'))).toEqual(openApiDocument(loadConfig({ NODE_ENV: 'development' })));
    // The served one differs only by the configuration of this server (none here).
    expect(doc).toEqual(openApiDocument(t.config));
  });

  it('describes the 35 operations of the interface once each: 36 operations, #16 with and without a version', () => {
    const interfaceRoutes = ALL_ROUTES.filter((r) => r.operation !== undefined);
    const numbers = new Set(interfaceRoutes.map((r) => r.operation!));
    expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
    const operations = operationsOf(doc).filter((op) => op['x-interface-operation'] !== undefined);
    expect(operations).toHaveLength(36);
    expect(new Set(operations.map((op) => op['x-interface-operation'])).size).toBe(35);
    expect(operations.map((op) => op.operationId).sort()).toEqual(interfaceRoutes.map((r) => r.operationId).sort());
    // Besides them: the token endpoint, the leveling extension (issue 13) and the webhooks (issue 26), nothing else.
    expect(operationsOf(doc).filter((op) => op['x-interface-operation'] === undefined).map((op) => op.operationId).sort())
      .toEqual(['createWebhook', 'deleteWebhook', 'getProjectLeveling', 'getTemplateLeveling', 'getWebhook', 'listWebhookAttempts', 'listWebhooks',
        'redeliverWebhookAttempt', 'requestToken', 'rotateWebhookSecret', 'sendTestWebhook', 'updateWebhook']);
    for (const op of operations) expect([op.operationId, /\d$/.test(op.operationId)]).toEqual([op.operationId, false]);
  });

  it('lists every route of the router, and nothing the router does not serve; an alias is named on its operations\' P path, not repeated', () => {
    const served = new Set(ALL_ROUTES.flatMap((r) => routePaths(r).flatMap(expandOptional).map((p) => `${r.method} ${toOpenApiPath(p)}`)));
    const documented = new Set(Object.keys(doc.paths).filter((key) => key !== '/auth/token')
      .flatMap((key) => servedAt(doc, key).flatMap((p) => METHODS.filter((m) => doc.paths[key][m]).map((m) => `${m} ${p}`))));
    expect([...documented].sort()).toEqual([...served].sort());
    expect(servedAt(doc, '/api/svc/v1/projects/{projectId}/templates')).toEqual(['/api/svc/v1/projects/{projectId}/templates', '/svc/v1/projects/{projectId}/templates']);
    expect(Object.keys(doc.paths).filter((key) => key.startsWith('/svc/'))).toEqual([]);
  });

  it('declares on every operation the statuses every request may get: 429 and 503 with Retry-After, 500, and 413/415 with a JSON body', () => {
    const responses = doc.components.responses;
    for (const op of operationsOf(doc).filter((o) => o.operationId !== 'requestToken')) {
      const statuses = Object.keys(op.responses);
      expect(statuses).toEqual(expect.arrayContaining(['400', '401', '403', '404', '429', '500', '503']));
      if (op.requestBody) expect(statuses).toEqual(expect.arrayContaining(['413', '415']));
      for (const status of ['429', '503']) {
        const response = responses[op.responses[status].$ref.split('/').pop()];
        expect(Object.keys(response.headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id']);
        expect(response.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
      }
    }
    expect(doc.components.headers['Retry-After']).toMatchObject({ required: true, schema: { type: 'integer', minimum: 1 } });
  });

  it('names a component for every record, with required on every field sent and null where null is sent', () => {
    const schemas = doc.components.schemas;
    for (const name of ['Project', 'Template', 'TemplateDetail', 'Document', 'Organization', 'ProjectTrade', 'ProjectStatistics', 'CreditsUsage', 'TradeList', 'Contractor']) {
      expect([name, schemas[name]?.type]).toEqual([name, 'object']);
      expect([name, [...schemas[name].required].sort()]).toEqual([name, Object.keys(schemas[name].properties).sort()]);
    }
    expect(schemas.Project.properties.archived_at.type).toEqual(['string', 'null']);
    expect(schemas.Template.properties.trade).toEqual({ $ref: '#/components/schemas/TemplateTrade' });
    expect(schemas.DocumentVersion.properties.is_mandate).toMatchObject({ type: 'string', enum: ['true', 'false'] });
    expect(schemas.Project.properties.id.examples).toEqual(['de000000-0000-4000-8000-000600000001']);
  });

  it('types limit as the integer 1-500 it is, and documents 200 beside 201 where a repeat changes nothing (#15, #27)', () => {
    const list = doc.paths['/api/svc/v1/projects'].get;
    expect(list.parameters.find((p: Json) => p.name === 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 500 });
    expect(Object.keys(doc.paths['/api/svc/v1/projects/{projectId}/templates/{templateId}/contractors'].post.responses)).toEqual(expect.arrayContaining(['200', '201']));
    expect(Object.keys(doc.paths['/api/svc/v1/pf/{userId}/roles'].post.responses)).toEqual(expect.arrayContaining(['200', '201']));
  });

  it('obtains tokens through the OAuth 2 password flow of the configured token endpoint, described at /auth/token', async () => {
    expect(doc.security).toEqual([{ oauth2: ['svc'] }]);
    expect(doc.components.securitySchemes.oauth2.flows.password.tokenUrl).toBe('/auth/token');
    expect(doc.paths['/auth/token'].post.requestBody.content['application/x-www-form-urlencoded'].schema.properties.grant_type.enum).toEqual(['password', 'refresh_token']);
    const elsewhere = await startTestApp({ AUTH_TOKEN_URL: 'https://sso.example.invalid/realms/tender/protocol/openid-connect/token', AUTH_DEV_PROVIDER: 'false', AUTH_JWKS_URL: `${t.url}/auth/jwks` });
    try {
      const served = (await request(elsewhere.url, 'GET', '/api/svc/v1/openapi.json')).body;
      expect(served.components.securitySchemes.oauth2.flows.password.tokenUrl).toBe('https://sso.example.invalid/realms/tender/protocol/openid-connect/token');
      expect(served.paths['/auth/token']).toBeUndefined();
    } finally {
      await elsewhere.close();
    }
  });

  it('defines its tags and license, and has no unused component', () => {
    const used = new Set(operationsOf(doc).flatMap((op) => op.tags));
    expect(doc.tags.map((tag: Json) => tag.name).sort()).toEqual([...used].sort());
    expect(doc.info.license).toEqual({ name: 'Proprietary', identifier: 'LicenseRef-Proprietary' });
    const text = JSON.stringify(doc);
    for (const [kind, group] of Object.entries<Json>(doc.components).filter(([k]) => k !== 'securitySchemes')) {
      for (const name of Object.keys(group)) expect([name, text.includes(`"#/components/${kind}/${name}"`)]).toEqual([name, true]);
    }
  });

  it('the response check of the test support refuses an answer that drifts from the document', () => {
    const headers = new Headers({ 'content-type': 'application/json', 'x-request-id': 'r1', etag: 'W/"1"' });
    const url = `${t.url}/api/svc/v1/trades/list`;
    const list = { trade_lists: [{ id: 'de000000-0000-4000-8000-000400000001', name: 'Lots', organization_id: null, created_at: '2026-01-02T08:00:00.000000Z', updated_at: '2026-01-02T08:00:00.000000Z' }] };
    expect(() => assertDocumentedResponse('GET', url, 200, headers, list)).not.toThrow();
    const { name: _, ...withoutName } = list.trade_lists[0];
    expect(() => assertDocumentedResponse('GET', url, 200, headers, { trade_lists: [withoutName] })).toThrow(/must have required property 'name'/);
    expect(() => assertDocumentedResponse('GET', url, 418, headers, list)).toThrow(/status 418 is not documented/);
    expect(() => assertDocumentedResponse('GET', url, 200, new Headers({ 'content-type': 'application/json' }), list)).toThrow(/header X-Request-Id is missing/);
  });

  it('names the body fields in snake_case, as REST callers send them', () => {
    const create = doc.components.schemas.CreateProjectInput;
    expect(Object.keys(create.properties)).toEqual(expect.arrayContaining(['construction_type', 'trade_list_id', 'site_address', 'optional_dates']));
    expect(create.required).toEqual(expect.arrayContaining(['name', 'construction_type', 'managers', 'trade_list_id', 'response_type']));
    expect(doc.components.schemas.ScopesInput.properties.vat).toMatchObject({ minimum: 1, maximum: 100 });
  });
});

describe('the leveling extension in the OpenAPI document (issue 13)', () => {
  it('describes both paths with named schemas from the output records, and the spreadsheet and CSV answers', () => {
    const project = doc.paths['/api/svc/v1/projects/{projectId}/leveling'].get;
    expect(project.responses['200'].content['application/json'].schema.properties.leveling).toEqual({ $ref: '#/components/schemas/ProjectLeveling' });
    expect(Object.keys(project.responses['200'].content)).toEqual(['application/json', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv']);
    expect(project.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort()).toEqual(['abnormally_low_below_median_percent', 'format']);
    expect(project['x-interface-operation']).toBeUndefined();
    const template = doc.paths['/api/svc/v1/projects/{projectId}/templates/{templateId}/leveling'].get;
    expect(template.responses['200'].content['application/json'].schema.properties.leveling).toEqual({ $ref: '#/components/schemas/TemplateLeveling' });
    expect(template.responses['404']).toBeDefined();
    const schemas = doc.components.schemas;
    for (const name of ['ProjectLeveling', 'TemplateLeveling', 'LevelingEntry', 'LevelingOffer', 'LevelingSummary', 'LevelingRow', 'LevelingCell', 'LevelingColumn', 'LevelingTotals', 'LevelingLot', 'AmountPercent']) {
      expect([name, schemas[name]?.type]).toEqual([name, 'object']);
    }
    expect(schemas.TemplateLeveling.properties.documents).toEqual({ type: 'array', items: { $ref: '#/components/schemas/LevelingEntry' } });
  });
});

describe('GET /api/svc/v1/docs', () => {
  it('serves a reference page and its assets from the installed swagger-ui-dist, no CDN', async () => {
    const page = await request(t.url, 'GET', '/api/svc/v1/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('/api/svc/v1/openapi.json');
    expect(page.text).not.toMatch(/https?:\/\//);
    const js = await request(t.url, 'GET', '/api/svc/v1/docs/swagger-ui-bundle.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
    expect((await request(t.url, 'GET', '/api/svc/v1/docs/package.json')).status).toBe(404);
  });

  it('answers 404 in the REST error shape for an asset named like a property every object inherits', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      const res = await request(t.url, 'GET', `/api/svc/v1/docs/${name}`);
      expect([name, res.status, res.body]).toEqual([name, 404, { code: 404, message: `No operation at GET /api/svc/v1/docs/${name}` }]);
      expect(res.headers.get('cache-control')).toBeNull();
    }
  });
});
