import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ARCHITECT, demoToken, median, withScratchDatabase } from './support';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { DEMO_IDS } from '../src/seed/demo-data';
import { LevelingService } from '../src/modules/leveling/leveling.service';
import { BENCH_PROJECT_IDS_SQL, buildDataset } from './dataset';

/**
 * Bid leveling at dashboard scale (issue 13). Builds issue 10's data set (bench/dataset.ts: 1,005 projects,
 * 8,011 templates and slices, 48,025 documents, 96,022 versions) in a scratch database, then measures:
 * - LevelingService.projects for 1, 100 and 1,000 projects (median of RUNS);
 * - the leveling of every project of the architect (the 1,000 and the demo's) in one GraphQL request (every lot with every document and its
 *   contractor, the matrix and the sums): time, answer size, statements, and the server's memory (peak heap
 *   and RSS sampled every 5 ms over the request, against before it);
 * - the .xlsx of the largest demo project (Résidence Les Tilleuls) and of a bench project (8 lots x 6
 *   documents) through REST: time, size, memory.
 * The server runs in this process, with a statement timeout of 60 s (the default 5 s would cut the largest
 * request on a loaded machine rather than measure it). BENCH_PROJECTS sets the number of projects (default
 * 1000). Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg.
 */

const RUNS = 5;

const LEVELING_QUERY = `query($first: Int) { projects(first: $first) { nodes { id leveling { id name currency
  totals { lots lotsWithOffers budget offeredLotsBudget lowest lowestDeviation { value percent } retained retainedDeviation { value percent } }
  contractors { contractorId contractor { id name } }
  matrix { templateId name budget lowest retained cells { contractorId documentId amount rank lowest retained abnormallyLow } }
  lotsWithoutOffers { templateId name budget }
  lots { id templateId name tradeNumber isSlice summary { documents offers lowest highest median mean spread { value percent } budget retained retainedDeviation { value percent } abnormallyLow }
    documents { documentId state intention rank lowest retained selected abnormallyLow offer { version sentAt subTotal discount amount }
      deviationFromBudget { value percent } deviationFromLowest { value percent } deviationFromMedian { value percent } contractor { id name } } } } } } }`;

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** Runs `fn` while sampling this process's heap and RSS; answers the peaks above what they were before. */
async function withMemory<T>(fn: () => Promise<T>): Promise<{ result: T; heapMb: number; rssMb: number }> {
  global.gc?.();
  const before = process.memoryUsage();
  let heap = before.heapUsed;
  let rss = before.rss;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed);
    rss = Math.max(rss, m.rss);
  }, 5);
  try {
    const result = await fn();
    const m = process.memoryUsage();
    return { result, heapMb: mb(Math.max(heap, m.heapUsed) - before.heapUsed), rssMb: mb(Math.max(rss, m.rss) - before.rss) };
  } finally {
    clearInterval(timer);
  }
}

async function timeService(orm: MikroORM, url: string, projectIds: string[]): Promise<void> {
  const config = loadConfig({ NODE_ENV: 'production', DATABASE_URL: url, LOG_LEVEL: 'silent' });
  for (const size of [1, 100, 1000]) {
    const ids = projectIds.slice(0, size);
    const call = () => new LevelingService({ em: orm.em.fork(), caller: ARCHITECT, config }).projects(ids, 20);
    await call();
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      const out = await call();
      times.push(performance.now() - start);
      if (out.size !== ids.length) throw new Error(`leveling of ${ids.length} projects answered ${out.size}`);
    }
    console.log(`LevelingService.projects(${size}): median ${median(times).toFixed(1)} ms over ${RUNS} runs`);
  }
}

async function overHttp(orm: MikroORM, url: string, projectIds: string[]): Promise<void> {
  const config = loadConfig({
    NODE_ENV: 'production', AUTH_DEV_PROVIDER: 'true', PORT: '0', DATABASE_URL: url, LOG_LEVEL: 'silent',
    RATE_LIMIT_API_POINTS: '1000000000', DATABASE_STATEMENT_TIMEOUT_MS: '60000',
  });
  const app = await createApp({ config, orm, log: createLogger(config) });
  const server = await listen(app, '127.0.0.1', 0);
  config.publicUrl = server.url;
  config.auth.issuer = server.url;
  let statements = 0;
  orm.em.getKnex().on('query', () => statements++);
  try {
    const token = await demoToken(server.url, 'svc email profile');
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };

    for (const [label, id] of [['largest demo project (Résidence Les Tilleuls)', DEMO_IDS.projects.residence], ['a bench project', projectIds[0]]] as const) {
      const xlsx = async () => {
        const res = await fetch(`${server.url}/api/svc/v1/projects/${id}/leveling?format=xlsx`, { headers });
        const body = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200) throw new Error(`xlsx answered ${res.status}`);
        return body;
      };
      await xlsx();
      const xt: number[] = [];
      let bytes = 0;
      let mem = { heapMb: 0, rssMb: 0 };
      for (let i = 0; i < RUNS * 2; i++) {
        const start = performance.now();
        const m = await withMemory(xlsx);
        xt.push(performance.now() - start);
        bytes = m.result.length;
        mem = { heapMb: Math.max(mem.heapMb, m.heapMb), rssMb: Math.max(mem.rssMb, m.rssMb) };
      }
      console.log(`.xlsx of the ${label}: median ${median(xt).toFixed(1)} ms over ${RUNS * 2}, ${(bytes / 1024).toFixed(1)} KiB, memory peak +${mem.heapMb} MB heap, +${mem.rssMb} MB RSS`);
    }
    for (const first of [100, undefined]) {
      const graphql = async (first?: number) => {
        const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: LEVELING_QUERY, variables: { first } }) });
        const text = await res.text();
        if (res.status !== 200 || text.includes('"errors"')) throw new Error(`GraphQL leveling answered ${res.status}: ${text.slice(0, 300)}`);
        return text;
      };
      const times: number[] = [];
      let peak = { heapMb: 0, rssMb: 0 };
      let size = 0;
      let ran = 0;
      let lots = 0;
      let count = 0;
      for (let i = 0; i < 3; i++) {
        statements = 0;
        const start = performance.now();
        const m = await withMemory(() => graphql(first)).catch((err: Error & { cause?: Error }) => {
          // How long the request ran before it failed tells which bound cut it (statement timeout, Node's
          // server timeouts, the client's): docs/benchmarks.md, leveling.
          throw new Error(`GraphQL leveling of ${first ?? 'every'} project failed after ${(performance.now() - start).toFixed(0)} ms: ${err.message} ${err.cause?.message ?? ''}`);
        });
        times.push(performance.now() - start);
        ran = statements;
        size = Buffer.byteLength(m.result);
        peak = { heapMb: Math.max(peak.heapMb, m.heapMb), rssMb: Math.max(peak.rssMb, m.rssMb) };
        const nodes = (JSON.parse(m.result) as { data: { projects: { nodes: Array<{ leveling: { lots: unknown[] } }> } } }).data.projects.nodes;
        count = nodes.length;
        lots = nodes.reduce((n, p) => n + p.leveling.lots.length, 0);
      }
      console.log(`GraphQL leveling of ${count} projects (${lots} lots) in one request: median ${median(times).toFixed(0)} ms over 3,`
        + ` ${(size / 1024 / 1024).toFixed(1)} MiB of JSON, ${ran} statements, server memory peak +${peak.heapMb} MB heap, +${peak.rssMb} MB RSS`);

    }
  } finally {
    await server.close();
  }
}

export async function run(): Promise<void> {
  const projects = Math.min(5000, Math.max(1, Number(process.env.BENCH_PROJECTS ?? 1000) || 1000));
  await withScratchDatabase('leveling', 10, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
    const counts = await buildDataset(execute, { projects });
    await execute('analyze');
    console.log(`data set: ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, ${counts.versions} versions`);
    const projectIds = (await execute<Array<{ id: string }>>(BENCH_PROJECT_IDS_SQL)).map((r) => r.id);
    await timeService(orm, url, projectIds);
    await overHttp(orm, url, projectIds);
  });
}
