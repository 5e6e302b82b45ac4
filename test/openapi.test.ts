import SwaggerParser from '@apidevtools/swagger-parser';
import { ALL_ROUTES } from '../src/rest';
import { routePaths } from '../src/rest/mount';
import { expandOptional, toOpenApiPath } from '../src/rest/openapi';
import { startTestApp, type TestApp } from './support/app';
import { request } from './support/http';

let t: TestApp;
let doc: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

beforeAll(async () => {
  t = await startTestApp();
  doc = (await request(t.url, 'GET', '/api/svc/v1/openapi.json')).body;
});
afterAll(() => t.close());

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

describe('GET /api/svc/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, version 1.0.0, served without a token', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('describes all 35 operations of the interface', () => {
    const numbers = new Set(ALL_ROUTES.flatMap((r) => (r.operation === undefined ? [] : [r.operation])));
    expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
    const ids = Object.values(doc.paths).flatMap((item) => METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => (item as Record<string, { operationId: string }>)[m].operationId));
    for (const r of ALL_ROUTES) expect(ids).toContain(r.operationId);
  });

  it('lists every route of the router, and nothing the router does not serve', () => {
    const served = new Set(ALL_ROUTES.flatMap((r) => routePaths(r).flatMap(expandOptional).map((p) => `${r.method} ${toOpenApiPath(p)}`)));
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, item]) => METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => `${m} ${p}`)));
    expect([...documented].sort()).toEqual([...served].sort());
  });

  it('declares on every operation the 429 of the rate limit, with Retry-After and the RateLimit headers', () => {
    const operations = Object.values(doc.paths).flatMap((item) => METHODS.map((m) => (item as Record<string, any>)[m]).filter(Boolean)); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(operations.length).toBeGreaterThanOrEqual(35);
    for (const op of operations) {
      expect(Object.keys(op.responses['429'].headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
      expect(op.responses['429'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    }
    expect(Object.keys(doc.components.headers)).toEqual(expect.arrayContaining(['Retry-After', 'RateLimit-Policy', 'RateLimit']));
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
    const template = doc.paths['/api/svc/v1/projects/{projectId}/templates/{templateId}/leveling'].get;
    expect(template.responses['200'].content['application/json'].schema.properties.leveling).toEqual({ $ref: '#/components/schemas/TemplateLeveling' });
    expect(template.responses['404']).toBeDefined();
    const schemas = doc.components.schemas;
    for (const name of ['ProjectLeveling', 'TemplateLeveling', 'LevelingEntry', 'LevelingOffer', 'LevelingSummary', 'LevelingRow', 'LevelingCell', 'LevelingColumn', 'LevelingTotals', 'LevelingLot', 'AmountPercent']) {
      expect([name, schemas[name]?.type]).toEqual([name, 'object']);
    }
    expect(schemas.LevelingEntry.properties.deviation_from_median).toEqual({ oneOf: [{ $ref: '#/components/schemas/AmountPercent' }, { type: 'null' }] });
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
