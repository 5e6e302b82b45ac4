import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { print } from 'graphql';
import { DashboardDocument } from '../examples/graphql/generated/graphql';
import { DEMO_IDS } from '../src/seed/demo-data';
import { freshDatabase } from './support/app';
import { tokenFor } from './support/auth';
import { request } from './support/http';
import { startInstanceProcess, type InstanceProcess } from './support/instance-process';

/**
 * Traces (docs/tracing.md): the service in a process of its own, as in production, since the instrumentations patch
 * `pg` and `http` when they are first required (Jest's module registry would hide them).
 */

interface SpanRecord { name: string; kind: number; traceId: string; spanId: string; parentSpanId: string | null; attributes: Record<string, unknown> }

const SERVER = 1;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const traceparent = () => {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
};

/** The spans under `root` (itself excluded), depth first. */
function descendants(spans: SpanRecord[], root: SpanRecord): SpanRecord[] {
  const children = spans.filter((s) => s.parentSpanId === root.spanId);
  return children.flatMap((c) => [c, ...descendants(spans, c)]);
}
const isStatement = (s: SpanRecord) => typeof s.attributes['db.statement'] === 'string' || typeof s.attributes['db.query.text'] === 'string';

describe('traces with an in-memory exporter', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let instance: InstanceProcess;
  beforeAll(async () => {
    db = await freshDatabase('tracing');
    instance = await startInstanceProcess(db.url, 'http://127.0.0.1:1', {}, path.join(__dirname, 'support/traced-instance.ts'));
  }, 60000);
  afterAll(async () => {
    await instance?.stop();
    await db?.drop();
  });

  const spans = () => new Promise<SpanRecord[]>((resolve) => {
    instance.proc.once('message', (m) => resolve(m as SpanRecord[]));
    instance.proc.send('spans');
  });

  it('nests the dashboard query as HTTP > GraphQL operation > loader batches > SQL, under the client\'s traceparent, with the statements of the statement-count test', async () => {
    const token = await tokenFor(instance.url, 'architect@demo.test');
    const query = print(DashboardDocument);
    // The caller is then kept, as in the statement-count test (test/graphql.dashboard.test.ts: 12 statements).
    await request(instance.url, 'POST', '/graphql', { token, body: { query, variables: { first: 1 } } });
    const parent = traceparent();
    const res = await request(instance.url, 'POST', '/graphql', { token, body: { query, variables: { first: 2 } }, headers: { traceparent: parent.header } });
    expect(res.body.errors).toBeUndefined();

    let trace: SpanRecord[] = [];
    for (let i = 0; i < 50 && !trace.some((s) => s.kind === SERVER); i++) {
      await sleep(50);
      trace = (await spans()).filter((s) => s.traceId === parent.traceId);
    }
    const server = trace.find((s) => s.kind === SERVER)!;
    expect(server).toMatchObject({ name: 'POST /graphql', parentSpanId: parent.parentId });
    expect(trace.filter((s) => s.kind === SERVER)).toHaveLength(1);

    const operation = trace.find((s) => s.name === 'query Dashboard')!;
    expect(operation).toMatchObject({ parentSpanId: server.spanId, attributes: { 'graphql.operation.type': 'query', 'graphql.operation.name': 'Dashboard' } });
    const below = descendants(trace, operation);
    const batches = below.filter((s) => s.name.startsWith('dataloader '));
    expect(batches.map((b) => b.name)).toEqual(expect.arrayContaining(['dataloader projectStatistics', 'dataloader managers', 'dataloader trades', 'dataloader templates']));
    for (const batch of batches) expect(descendants(trace, batch).some(isStatement)).toBe(true);
    // The templates' batch reads the levels below ahead (stats, documents, versions, contractors): their statements
    // are its children, and those loaders need no batch of their own.
    const templates = batches.find((b) => b.name === 'dataloader templates')!;
    expect(descendants(trace, templates).filter(isStatement).length).toBeGreaterThanOrEqual(5);
    // Every statement of the operation is in the trace, under it.
    expect(below.filter(isStatement)).toHaveLength(12);
    // Statement text without values: parameters stay parameters, and the ids written into a statement (the caller's
    // organizations) are masked.
    const texts = below.filter(isStatement).map((s) => String(s.attributes['db.query.text'] ?? s.attributes['db.statement']));
    expect(texts.some((text) => text.includes("'?'"))).toBe(true);
    for (const text of texts) expect(text).not.toContain(DEMO_IDS.organizations.atelierDemo);
  });

  it('names a REST request\'s span after its route template, never its URL', async () => {
    const token = await tokenFor(instance.url, 'architect@demo.test');
    const parent = traceparent();
    expect((await request(instance.url, 'GET', `/api/svc/v1/projects/${DEMO_IDS.projects.school}`, { token, headers: { traceparent: parent.header } })).status).toBe(200);
    let server: SpanRecord | undefined;
    for (let i = 0; i < 50 && !server; i++) {
      await sleep(50);
      server = (await spans()).find((s) => s.traceId === parent.traceId && s.kind === SERVER);
    }
    expect(server).toMatchObject({ name: 'GET /api/svc/v1/projects/:projectId', attributes: { 'http.route': '/api/svc/v1/projects/:projectId' } });
  });
});

describe('traces over OTLP/HTTP', () => {
  it('exports the spans to the collector OTEL_EXPORTER_OTLP_ENDPOINT names, and the request\'s log lines carry its trace id', async () => {
    const received: Array<{ resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ traceId: string; name: string }> }> }> }> = [];
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/traces') received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const db = await freshDatabase('tracing-otlp');
    let instance: InstanceProcess | null = null;
    try {
      instance = await startInstanceProcess(db.url, 'http://127.0.0.1:1', {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'tender-bff-test',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      const token = await tokenFor(instance.url, 'architect@demo.test');
      const parent = traceparent();
      expect((await request(instance.url, 'GET', '/api/svc/v1/projects', { token, headers: { traceparent: parent.header } })).status).toBe(200);
      const ofTrace = () => received.flatMap((r) => r.resourceSpans).flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ ...s, resource: rs.resource }))))
        .filter((s) => s.traceId === parent.traceId);
      for (let i = 0; i < 100 && !ofTrace().some((s) => s.name === 'GET /api/svc/v1/projects'); i++) await sleep(50);
      const spans = ofTrace();
      expect(spans.map((s) => s.name)).toContain('GET /api/svc/v1/projects');
      expect(spans.some((s) => /^(pg\.query|select|SELECT)/.test(s.name))).toBe(true);
      expect(spans[0].resource.attributes).toEqual(expect.arrayContaining([{ key: 'service.name', value: { stringValue: 'tender-bff-test' } }]));
      const lines = instance.output().split('\n').filter((l) => l.includes(`"trace_id":"${parent.traceId}"`));
      expect(lines.length).toBeGreaterThan(0);
    } finally {
      await instance?.stop();
      await db.drop();
      collector.closeAllConnections();
      await new Promise((resolve) => collector.close(resolve));
    }
  }, 60000);
});
