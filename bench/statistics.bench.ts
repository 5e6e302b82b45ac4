import 'reflect-metadata';
import { withScratchDatabase } from './support';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config';
import { DEMO_IDS } from '../src/seed/demo-data';
import type { Caller } from '../src/services/caller';
import { StatisticsService } from '../src/services/statistics.service';

/**
 * Statistics at dashboard scale: builds ~1,000 projects (5 trades each, the first split into 2 slices, 4
 * invited contractors per consultation, answers of every state) in a scratch database, then times
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

/** Set-based inserts: the data set is built in a handful of statements, whatever its size. */
const BUILD = (projects: number) => [
  `insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email)
   select gen_random_uuid(), now(), now(), 'BENCHCTR' || lpad(i::text, 9, '0'), '${DEMO_IDS.organizations.atelierDemo}',
     'Entreprise ' || i, 'bench-' || i || '@example.test'
   from generate_series(1, 50) i`,
  `insert into project (id, created_at, updated_at, legacy_id, organization_id, name, construction_type, trade_list_id, response_type)
   select gen_random_uuid(), now(), now(), 'BENCHPRJ' || lpad(i::text, 9, '0'),
     case when i % 2 = 0 then '${DEMO_IDS.organizations.atelierNord}'::uuid else '${DEMO_IDS.organizations.atelierDemo}'::uuid end,
     'Bench ' || i, 'office', '${DEMO_IDS.tradeLists.standard}', 'DPGF'
   from generate_series(1, ${projects}) i`,
  `insert into project_trade (id, created_at, updated_at, legacy_id, project_id, number, name, short_name)
   select gen_random_uuid(), now(), now(), 'BENCHPTR' || lpad((row_number() over ())::text, 9, '0'), p.id,
     lpad(n::text, 2, '0'), 'Lot ' || n, 'L' || n
   from project p cross join generate_series(1, 5) n where p.legacy_id like 'BENCHPRJ%'`,
  `insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, budget)
   select gen_random_uuid(), now(), now(), 'BENCHTPL' || lpad((row_number() over ())::text, 9, '0'), pt.project_id, pt.id,
     10000 + abs(hashtext(pt.id::text)) % 90000
   from project_trade pt where pt.legacy_id like 'BENCHPTR%'`,
  `insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, parent_id, is_slice, slice_name, budget)
   select gen_random_uuid(), now(), now(), 'BENCHSLC' || lpad((row_number() over ())::text, 9, '0'), t.project_id, t.trade_id,
     t.id, true, 'Tranche ' || k, round(t.budget / 3, 2)
   from template t join project_trade pt on pt.id = t.trade_id cross join generate_series(1, 2) k
   where t.legacy_id like 'BENCHTPL%' and pt.number = '01'`,
  `insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id, intention, dce_downloaded_at)
   select gen_random_uuid(), now(), now(), 'BENCHDOC' || lpad((row_number() over ())::text, 9, '0'), t.id, c.id,
     (array['YES', 'NO', 'MAYBE', null])[1 + (t.rn + k) % 4], case when (t.rn + k) % 3 = 0 then null else now() end
   from (select id, row_number() over (order by id) as rn from template where legacy_id like 'BENCH%') t
   cross join generate_series(0, 3) k
   join (select id, row_number() over (order by id) - 1 as idx from contractor where legacy_id like 'BENCHCTR%') c
     on c.idx = (t.rn * 4 + k) % 50`,
  // By document: none, ANSWERED, DECLINED, DRAFT, or ANSWERED then IN_REVISION.
  `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount)
   select gen_random_uuid(), now(), now(), d.id, v,
     case when v = 2 then 'IN_REVISION' when d.rn % 5 = 2 then 'DECLINED' when d.rn % 5 = 3 then 'DRAFT' else 'ANSWERED' end,
     case when d.rn % 5 = 2 then 0 else round(d.budget * (0.85 + (d.rn % 30) / 100.0), 2) end,
     case when d.rn % 5 = 2 then 0 else (d.rn % 4) * 100 end
   from (select d.id, t.budget, row_number() over (order by d.id) as rn
         from document d join template t on t.id = d.template_id where d.legacy_id like 'BENCHDOC%') d
   cross join generate_series(1, 2) v
   where d.rn % 5 <> 0 and (v = 1 or d.rn % 5 = 4)`,
  `update template t set selected_consultation_id = s.id
   from (select distinct on (template_id) template_id, id from document where legacy_id like 'BENCHDOC%' order by template_id, id) s
   where s.template_id = t.id and t.legacy_id like 'BENCH%' and abs(hashtext(t.id::text)) % 3 = 0`,
  'analyze',
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export async function run(): Promise<void> {
  const projects = Math.min(Math.max(Number(process.env.BENCH_PROJECTS ?? 1000) || 1000, 1), MAX_PROJECTS);
  await withScratchDatabase('statistics', 2, async (orm, url) => {
    let started = performance.now();
    for (const sql of BUILD(projects)) await orm.em.getConnection().execute(sql);
    const counts = (await orm.em.getConnection().execute<Array<Record<string, string>>>(`
      select (select count(*) from project where legacy_id like 'BENCH%') as projects,
        (select count(*) from template where legacy_id like 'BENCH%') as templates,
        (select count(*) from document where legacy_id like 'BENCH%') as documents,
        (select count(*) from document_version v join document d on d.id = v.document_id where d.legacy_id like 'BENCH%') as versions`))[0];
    console.log(`statistics: built ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, ${counts.versions} versions in ${(performance.now() - started).toFixed(0)} ms`);

    let statements = 0;
    orm.em.getKnex().on('query', () => { statements++; });
    const config = loadConfig({ NODE_ENV: 'production', DATABASE_URL: url, LOG_LEVEL: 'silent' });
    const service = () => new StatisticsService({ em: orm.em.fork(), caller: ARCHITECT, config });
    const projectIds = (await orm.em.getConnection().execute<Array<{ id: string }>>(
      `select id from project where legacy_id like 'BENCH%' order by legacy_id`)).map((r) => r.id);
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
