import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import pg from 'pg';
import { toRest } from '../src/platform/rest/serialize';
import { projectStatisticsSql, projectStatisticsView, type ProjectStatsRow } from '../src/modules/statistics/statistics.service';

/**
 * The floor the REST statistics operation (#5) is measured against: node:http and a pg pool running the
 * service's own statistics statement for a fixed caller (the demo architect's organizations) and answering
 * the same body, with nothing else: no token, no caller lookup, no middleware.
 */
export interface BareServer {
  url: string;
  close(): Promise<void>;
}

function statisticsPool(databaseUrl: string, poolSize: number) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, options: '-c jit=off' });
  // The scratch database is dropped with its connections when the benchmark ends: an idle client's error then is expected.
  pool.on('error', () => undefined);
  return { pool, statistics: (id: string, organizationIds: string[]) => pool.query<ProjectStatsRow>(projectStatisticsSql([id], organizationIds)) };
}

/** The service's answer for a project's statistics row, or its 404 when the caller may not see the project. */
function statisticsAnswer(id: string, row: ProjectStatsRow | undefined): [number, unknown] {
  return row ? [200, { project: { id, statistics: toRest(projectStatisticsView(row)) } }] : [404, { code: 404, message: 'Project not found' }];
}

async function serve(server: http.Server, pool: pg.Pool): Promise<BareServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

export async function startBareStatisticsServer(databaseUrl: string, poolSize: number, organizationIds: string[]): Promise<BareServer> {
  const { pool, statistics } = statisticsPool(databaseUrl, poolSize);
  const path = /^\/projects\/([0-9a-fA-F-]{36})\/statistics$/;
  const server = http.createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const match = path.exec(req.url ?? '');
    if (!match) return answer(404, { code: 404, message: 'Not found' });
    const id = match[1].toLowerCase();
    statistics(id, organizationIds).then(({ rows }) => answer(...statisticsAnswer(id, rows[0])), () => answer(500, { code: 500, message: 'Internal error' }));
  });
  return serve(server, pool);
}

/**
 * The fixed stack's own floor: the same statement and body behind Koa and @koa/router at the service's path,
 * with nothing else (no middleware, no token, no validation, no ORM). What the service adds beyond this is its
 * features; what this adds beyond the bare server is the framework every route is served through.
 */
export async function startKoaStatisticsServer(databaseUrl: string, poolSize: number, organizationIds: string[]): Promise<BareServer> {
  const { pool, statistics } = statisticsPool(databaseUrl, poolSize);
  const router = new Router();
  router.get('/api/svc/v1/projects/:projectId/statistics', async (ctx) => {
    const id = ctx.params.projectId.toLowerCase();
    [ctx.status, ctx.body] = statisticsAnswer(id, (await statistics(id, organizationIds)).rows[0]);
  });
  const koa = new Koa();
  koa.silent = true;
  koa.use(router.routes());
  return serve(http.createServer(koa.callback()), pool);
}
