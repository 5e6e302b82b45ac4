import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ARCHITECT, median, withScratchDatabase } from './support';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { StatisticsService } from '../src/modules/statistics/statistics.service';
import { startBareStatisticsServer, startKoaStatisticsServer } from './bare-statistics-server';
import { addOtherOrganizations, BENCH_PROJECT_IDS_SQL, buildDataset } from './dataset';
import { load } from './http-load';
import { oracleProjectStatistics, oracleTemplateStats } from '../test/support/statistics-oracle';

/**
 * Statistics at dashboard scale (issue 10). Builds the dashboard data set (bench/dataset.ts: 1,005 projects,
 * 8,011 templates and slices, 48,025 documents, 96,022 versions) in a scratch database, then:
 * - times StatisticsService.projectStatistics and templateStats for 1, 100 and 1,000 ids (median of RUNS),
 *   interleaved with the formulas recomputed from the histories as before issue 10 (the tests' oracle);
 * - the dashboard's two statistics statements for 50 projects (their 400 templates), EXPLAIN ANALYZE, both ways;
 * - REST statistics (#5) throughput against a bare node:http + pg server running the same statement, and against
 *   the same behind Koa and @koa/router alone, the framework's own floor (bench/bare-statistics-server.ts),
 *   16 connections, autocannon from a process of its own, and the SQL statements one REST request runs;
 * - then adds BENCH_OTHER_FACTOR (default 100) times as many rows of other organizations and times
 *   projectStatistics of the same 1,000 projects again (the ratio must stay near 1).
 * The scratch database is dropped at the end.
 *
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg; loopback only.
 * BENCH_PROJECTS sets the number of projects (default 1000, at most 5000); BENCH_OTHER_FACTOR=0 skips the
 * other organizations; BENCH_HTTP_SECONDS sets each load run's length (default 8 s, 3 rounds).
 */

const MAX_PROJECTS = 5000;
const RUNS = 7;
const POOL = 10;

/** Counts the SQL statements `orm` sends while a callback runs. */
function statementCounter(orm: MikroORM) {
  let statements = 0;
  let captured: Array<{ sql: string; bindings: unknown[] }> = [];
  orm.em.getKnex().on('query', (q: { sql: string; bindings?: unknown[] }) => {
    statements++;
    captured.push({ sql: q.sql, bindings: q.bindings ?? [] });
  });
  return {
    async measure<T>(fn: () => Promise<T>): Promise<{ result: T; statements: number; sql: typeof captured }> {
      statements = 0;
      captured = [];
      const result = await fn();
      return { result, statements, sql: captured };
    },
  };
}

type Counter = ReturnType<typeof statementCounter>;

/** Medians in milliseconds by label. */
type Figures = Record<string, number>;

/**
 * Times `now` (the service) and `before` (the formulas recomputed from the histories, as before issue 10:
 * test/support/statistics-oracle.ts) on the same rows, interleaved so that the machine's load weighs on both.
 */
async function timeService(orm: MikroORM, url: string, counter: Counter, label: string, sizes: number[]): Promise<Figures> {
  const config = loadConfig({ NODE_ENV: 'production', DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const service = () => new StatisticsService({ em: orm.em.fork(), caller: ARCHITECT, config });
  const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
  const projectIds = (await execute<Array<{ id: string }>>(BENCH_PROJECT_IDS_SQL)).map((r) => r.id);
  const templateIds = (await execute<Array<{ id: string }>>(
    `select id from template where legacy_id like 'BENCH%' order by legacy_id`)).map((r) => r.id);
  const orgs = ARCHITECT.adminOrganizationIds;
  const figures: Figures = {};
  type Call = () => Promise<Map<string, unknown>>;
  const measure = async (name: string, size: number, now: Call, before: Call) => {
    await now(); // warm-up: plans and caches
    await before();
    const times = { now: [] as number[], before: [] as number[] };
    let m = await counter.measure(now);
    for (let i = 0; i < RUNS; i++) {
      let started = performance.now();
      m = await counter.measure(now);
      times.now.push(performance.now() - started);
      started = performance.now();
      await before();
      times.before.push(performance.now() - started);
    }
    figures[`${name} ${size}`] = median(times.now);
    figures[`${name} ${size} before`] = median(times.before);
    console.log(`statistics ${label}: ${name.padEnd(18)} n=${String(size).padStart(5)}  maintained: median ${median(times.now).toFixed(1).padStart(6)} ms ` +
      `(min ${Math.min(...times.now).toFixed(1)}, max ${Math.max(...times.now).toFixed(1)}), ${m.statements} SQL statement(s), ${m.result.size} answered;  ` +
      `recomputed from the histories (before): median ${median(times.before).toFixed(1).padStart(7)} ms`);
  };
  for (const n of sizes.filter((x) => x <= projectIds.length)) {
    const ids = projectIds.slice(0, n);
    await measure('projectStatistics', n, () => service().projectStatistics(ids), () => oracleProjectStatistics(orm.em.fork(), ids, orgs));
  }
  for (const n of sizes.filter((x) => x <= templateIds.length)) {
    const ids = templateIds.slice(0, n);
    await measure('templateStats', n, () => service().templateStats(ids), () => oracleTemplateStats(orm.em.fork(), ids, orgs));
  }
  return figures;
}

/**
 * The statements the dashboard runs for the statistics of 50 projects and the stats of their templates,
 * captured as the service sends them, then timed by PostgreSQL itself (EXPLAIN ANALYZE, median of RUNS).
 */
async function explainDashboard(orm: MikroORM, url: string, counter: Counter, label: string): Promise<Figures> {
  const config = loadConfig({ NODE_ENV: 'production', DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const service = () => new StatisticsService({ em: orm.em.fork(), caller: ARCHITECT, config });
  const execute = <T>(sql: string, params: unknown[] = []) => orm.em.getConnection().execute(sql, params) as Promise<T>;
  const projectIds = (await execute<Array<{ id: string }>>(BENCH_PROJECT_IDS_SQL)).map((r) => r.id).slice(0, 50);
  const templateIds = (await execute<Array<{ id: string }>>(
    'select id from template where project_id = any(array[?]::uuid[]) order by id', [projectIds])).map((r) => r.id);
  const figures: Figures = {};
  const orgs = ARCHITECT.adminOrganizationIds;
  const statements: Array<[string, () => Promise<unknown>]> = [
    ['project statistics', () => service().projectStatistics(projectIds)],
    [`template stats (${templateIds.length})`, () => service().templateStats(templateIds)],
    ['project statistics, before', () => oracleProjectStatistics(orm.em.fork(), projectIds, orgs)],
    [`template stats (${templateIds.length}), before`, () => oracleTemplateStats(orm.em.fork(), templateIds, orgs)],
  ];
  for (const [name, call] of statements) {
    const [{ sql, bindings }] = (await counter.measure(call)).sql;
    const times: number[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const [row] = await execute<Array<{ 'QUERY PLAN': Array<{ 'Execution Time': number }> }>>(`explain (analyze, format json) ${sql}`, bindings);
      if (i > 0) times.push(row['QUERY PLAN'][0]['Execution Time']);
    }
    figures[name] = median(times);
    console.log(`statistics ${label}: dashboard statement, ${name.padEnd(30)} 50 projects  EXPLAIN ANALYZE median ${median(times).toFixed(2)} ms`);
  }
  return figures;
}

/** REST #5 against the bare server, 16 connections, interleaved rounds; requests per second. */
async function restVsBare(orm: MikroORM, url: string, counter: Counter, store: 'postgres' | 'memory'): Promise<Figures> {
  const seconds = Math.max(1, Number(process.env.BENCH_HTTP_SECONDS ?? 8) || 8);
  const config = loadConfig({
    NODE_ENV: 'production', AUTH_DEV_PROVIDER: 'true', PORT: '0', DATABASE_URL: url, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: String(POOL),
    RATE_LIMIT_API_POINTS: '1000000000', RATE_LIMIT_STORE: store,
  });
  const app = await createApp({ config, orm, log: createLogger(config) });
  const server = await listen(app, '127.0.0.1', 0);
  config.publicUrl = server.url;
  config.auth.issuer = server.url;
  const bare = await startBareStatisticsServer(url, POOL, ARCHITECT.adminOrganizationIds);
  const koa = await startKoaStatisticsServer(url, POOL, ARCHITECT.adminOrganizationIds);
  try {
    const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' });
    const tokenRes = await fetch(`${server.url}/auth/token`, { method: 'POST', body: form });
    if (tokenRes.status !== 200) throw new Error(`token request answered ${tokenRes.status}`);
    const headers = { Authorization: `Bearer ${((await tokenRes.json()) as { access_token: string }).access_token}` };
    const projectIds = (await orm.em.getConnection().execute<Array<{ id: string }>>(BENCH_PROJECT_IDS_SQL)).map((r) => r.id);
    const restPaths = projectIds.map((id) => `/api/svc/v1/projects/${id}/statistics`);
    const barePaths = projectIds.map((id) => `/projects/${id}/statistics`);

    // Same bodies, or the comparison means nothing.
    for (const id of projectIds.slice(0, 20)) {
      const [a, b, c] = await Promise.all([
        fetch(`${server.url}/api/svc/v1/projects/${id}/statistics`, { headers }), fetch(`${bare.url}/projects/${id}/statistics`), fetch(`${koa.url}/api/svc/v1/projects/${id}/statistics`),
      ]);
      const [ta, tb, tc] = [await a.text(), await b.text(), await c.text()];
      if (a.status !== 200 || ta !== tb || ta !== tc) throw new Error(`REST, bare and Koa bodies differ for ${id}: ${a.status} ${ta} / ${tb} / ${tc}`);
    }
    const one = await counter.measure(() => fetch(server.url + restPaths[0], { headers }).then((r) => r.text()));
    console.log(`statistics: REST #5 runs ${one.statements} SQL statement(s) per request`);

    const rest: number[] = [];
    const floor: number[] = [];
    const framework: number[] = [];
    await load(server.url, restPaths, { headers, connections: 16, seconds: 2 }); // warm-up
    await load(bare.url, barePaths, { connections: 16, seconds: 2 });
    await load(koa.url, restPaths, { connections: 16, seconds: 2 });
    for (let round = 0; round < 3; round++) {
      floor.push((await load(bare.url, barePaths, { connections: 16, seconds })).requests);
      framework.push((await load(koa.url, restPaths, { connections: 16, seconds })).requests);
      rest.push((await load(server.url, restPaths, { headers, connections: 16, seconds })).requests);
    }
    const figures = { rest: median(rest), bare: median(floor), koa: median(framework) };
    const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log(`statistics: REST #5 (rate limits counted in ${store}) ${figures.rest.toFixed(0)} req/s, bare node:http + pg ${figures.bare.toFixed(0)} req/s, ` +
      `Koa + @koa/router + pg ${figures.koa.toFixed(0)} req/s (median of ${rest.length} rounds of ${seconds} s, 16 connections): ` +
      `REST / bare ${(figures.rest / figures.bare).toFixed(2)}x, Koa / bare ${(figures.koa / figures.bare).toFixed(2)}x, REST / Koa ${(figures.rest / figures.koa).toFixed(2)}x ` +
      `[rest ${list(rest)}; bare ${list(floor)}; koa ${list(framework)}]`);
    return figures;
  } finally {
    await koa.close();
    await bare.close();
    await server.close();
    await app.stop();
  }
}

/** Everything above on a database that holds the data set (other organizations added if `otherFactor`). */
export async function measureStatistics(orm: MikroORM, url: string, otherFactor: number, options: { rest?: boolean } = {}): Promise<void> {
  const counter = statementCounter(orm);
  const one = await timeService(orm, url, counter, '1x', [1, 100, 1000]);
  await explainDashboard(orm, url, counter, '1x');
  if (options.rest !== false) {
    // The default store (the service's database) and the in-process one: the limiter's round trip is one more.
    await restVsBare(orm, url, counter, 'postgres');
    await restVsBare(orm, url, counter, 'memory');
  }
  if (otherFactor > 0) {
    const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
    const started = performance.now();
    const others = await addOtherOrganizations(execute, { otherOrganizationsFactor: otherFactor });
    console.log(`statistics: added ${others.projects} projects, ${others.templates} templates, ${others.documents} documents, ` +
      `${others.versions} versions of ${otherFactor} other organizations in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const many = await timeService(orm, url, counter, `${otherFactor}x`, [1000]);
    await explainDashboard(orm, url, counter, `${otherFactor}x`);
    const ratio = (key: string) => (many[key] / one[key]).toFixed(2);
    console.log(`statistics: projectStatistics of 1,000 projects with ${otherFactor}x other organizations' rows / without: ` +
      `${ratio('projectStatistics 1000')}x (before: ${ratio('projectStatistics 1000 before')}x)`);
  }
}

export async function run(): Promise<void> {
  const projects = Math.min(Math.max(Number(process.env.BENCH_PROJECTS ?? 1000) || 1000, 1), MAX_PROJECTS);
  const otherFactor = Math.max(0, Math.floor(Number(process.env.BENCH_OTHER_FACTOR ?? 100)));
  await withScratchDatabase('statistics', POOL, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
    const started = performance.now();
    const counts = await buildDataset(execute, { projects });
    console.log(`statistics: built ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, ` +
      `${counts.versions} versions in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await measureStatistics(orm, url, otherFactor);
  });
}

/** REST against the bare server alone, on a database that holds the data set. */
export async function restOnly(orm: MikroORM, url: string): Promise<void> {
  const counter = statementCounter(orm);
  await restVsBare(orm, url, counter, 'postgres');
  await restVsBare(orm, url, counter, 'memory');
}

/** REST under load alone (for a CPU profile of the service: node --cpu-prof). */
export async function restLoadOnly(orm: MikroORM, url: string, seconds: number): Promise<void> {
  const config = loadConfig({
    NODE_ENV: 'production', AUTH_DEV_PROVIDER: 'true', PORT: '0', DATABASE_URL: url, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: String(POOL),
    RATE_LIMIT_API_POINTS: '1000000000', RATE_LIMIT_STORE: 'memory',
  });
  const app = await createApp({ config, orm, log: createLogger(config) });
  const server = await listen(app, '127.0.0.1', 0);
  config.publicUrl = server.url;
  config.auth.issuer = server.url;
  const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc email profile' });
  const tokenRes = await fetch(`${server.url}/auth/token`, { method: 'POST', body: form });
  const headers = { Authorization: `Bearer ${((await tokenRes.json()) as { access_token: string }).access_token}` };
  const projectIds = (await orm.em.getConnection().execute<Array<{ id: string }>>(BENCH_PROJECT_IDS_SQL)).map((r) => r.id);
  const r = await load(server.url, projectIds.map((id) => `/api/svc/v1/projects/${id}/statistics`), { headers, connections: 16, seconds });
  console.log(`REST ${r.requests} req/s`);
  await server.close();
  await app.stop();
}
