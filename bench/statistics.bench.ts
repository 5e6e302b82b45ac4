import 'reflect-metadata';
import { withScratchDatabase } from './support';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config';
import { DEMO_IDS } from '../src/seed/demo-data';
import type { Caller } from '../src/services/caller';
import { StatisticsService } from '../src/services/statistics.service';
import { BENCH_PROJECT_IDS_SQL, buildDataset } from './dataset';

/**
 * Statistics at dashboard scale: builds issue 10's data set (bench/dataset.ts: 1,005 projects, 8,011 templates
 * and slices, 48,025 documents, 96,022 versions) in a scratch database, then times
 * StatisticsService.projectStatistics for 1, 100 and 1,000 projects and templateStats for as many
 * templates, printing milliseconds and SQL statement counts. The scratch database is dropped at the end.
 *
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg; loopback only.
 * BENCH_PROJECTS sets the number of projects (default 1000, at most 5000).
 */

const MAX_PROJECTS = 5000;
const RUNS = 5;
const ARCHITECT: Caller = {
  userId: DEMO_IDS.users.architect,
  email: 'architect@demo.test',
  adminOrganizationIds: [DEMO_IDS.organizations.atelierDemo, DEMO_IDS.organizations.atelierNord],
  currentOrganizationId: DEMO_IDS.organizations.atelierDemo,
  adminHeadquarterIds: [DEMO_IDS.headquarter],
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export async function run(): Promise<void> {
  const projects = Math.min(Math.max(Number(process.env.BENCH_PROJECTS ?? 1000) || 1000, 1), MAX_PROJECTS);
  await withScratchDatabase('statistics', 2, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.getConnection().execute(sql) as Promise<T>;
    let started = performance.now();
    const counts = await buildDataset(execute, { projects });
    console.log(`statistics: built ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, ${counts.versions} versions in ${(performance.now() - started).toFixed(0)} ms`);

    let statements = 0;
    orm.em.getKnex().on('query', () => { statements++; });
    const config = loadConfig({ NODE_ENV: 'production', DATABASE_URL: url, LOG_LEVEL: 'silent' });
    const service = () => new StatisticsService({ em: orm.em.fork(), caller: ARCHITECT, config });
    const projectIds = (await execute<Array<{ id: string }>>(BENCH_PROJECT_IDS_SQL)).map((r) => r.id);
    const templateIds = (await orm.em.getConnection().execute<Array<{ id: string }>>(
      `select id from template where legacy_id like 'BENCH%' order by legacy_id`)).map((r) => r.id);

    const measure = async (label: string, size: number, call: () => Promise<Map<string, unknown>>) => {
      await call(); // warm-up: plans and caches
      const times: number[] = [];
      let perCall = 0;
      let answered = 0;
      for (let i = 0; i < RUNS; i++) {
        statements = 0;
        started = performance.now();
        answered = (await call()).size;
        times.push(performance.now() - started);
        perCall = statements;
      }
      console.log(`statistics: ${label.padEnd(18)} n=${String(size).padStart(5)}  median ${median(times).toFixed(1).padStart(7)} ms  ` +
        `(min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)})  ${perCall} SQL statement(s)  ${answered} answered`);
    };
    for (const n of [1, 100, 1000].filter((x) => x <= projectIds.length)) {
      await measure('projectStatistics', n, () => service().projectStatistics(projectIds.slice(0, n)));
    }
    if (projectIds.length > 1000) await measure('projectStatistics', projectIds.length, () => service().projectStatistics(projectIds));
    for (const n of [1, 100, 1000].filter((x) => x <= templateIds.length)) {
      await measure('templateStats', n, () => service().templateStats(templateIds.slice(0, n)));
    }
  });
}
