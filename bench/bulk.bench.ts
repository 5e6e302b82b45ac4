import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { median, withScratchDatabase } from './support';
import { buildDataset } from './dataset';

/**
 * A bulk write of derived-data sources (issue 24): 10,000 versions over 5,000 documents in one INSERT, as a contractor
 * portal importing answers would send it (no `template_id`: the database derives it), timed
 *
 * - with the triggers on (statistics, the versions' template, the change events), and
 * - with the triggers off (every trigger of `document_version` disabled; the insert then gives each version its
 *   template itself, which the table's check requires), followed by the rebuild of everything derived.
 *
 * ROUNDS rounds of each, alternated; the versions are deleted between rounds (not timed). Target
 * (docs/benchmarks.md): triggers on at most 3x the other way.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** 104 projects of 8 templates with 6 documents each: 4,992 documents, plus the demo's 25. */
const PROJECTS = 104;

const BENCH_DOCUMENTS = `select d.id, d.template_id from document d where d.legacy_id like 'BENCHDOC%'`;
/**
 * Two versions of each document in one statement. Without `template_id` as the portal sends it (the trigger derives
 * it); with it for a writer without triggers, since the table's check requires it.
 */
const insertVersions = (withTemplate: boolean) => `insert into document_version
  (id, created_at, updated_at, document_id, ${withTemplate ? 'template_id, ' : ''}version, status, sub_total, discount, sent_at)
  select gen_random_uuid(), now(), now(), d.id, ${withTemplate ? 'd.template_id, ' : ''}k, case when k = 1 then 'IN_REVISION' else 'ANSWERED' end,
    1000 + (abs(hashtext(d.id::text)) % 90000) + k, 0, now()
  from (${BENCH_DOCUMENTS}) d cross join generate_series(1, 2) k`;
const DELETE_VERSIONS = `delete from document_version where document_id in (select id from (${BENCH_DOCUMENTS}) d)`;

export async function run(): Promise<void> {
  await withScratchDatabase('bulk', 4, async (orm, url) => {
    const execute = <T>(sql: string) => orm.em.fork().getConnection().execute(sql) as Promise<T>;
    const counts = await buildDataset(execute, { projects: PROJECTS });
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows: [{ n: documents }] } = await client.query<{ n: string }>(`select count(*) as n from (${BENCH_DOCUMENTS}) d`);
      console.log(`bulk: ${counts.projects} projects, ${documents} documents of the data set; each round inserts ${Number(documents) * 2} versions in one statement`);
      const rebuild = (await client.query(`select 1 from pg_proc where proname = 'derived_data_rebuild'`)).rowCount ? 'derived_data_rebuild' : 'statistics_rebuild';
      const timed = async (statements: string[]) => {
        await client.query(DELETE_VERSIONS);
        await client.query('vacuum analyze document_version');
        const started = performance.now();
        await client.query('begin');
        for (const sql of statements) await client.query(sql);
        await client.query('commit');
        return performance.now() - started;
      };
      // Each trigger of the table back as it was (ENABLE ALWAYS, or not), after a round without them.
      const { rows: triggers } = await client.query<{ tgname: string; tgenabled: string }>(
        `select tgname, tgenabled from pg_trigger where tgrelid = 'document_version'::regclass and not tgisinternal`);
      const MODES: Record<string, string> = { O: 'enable trigger', A: 'enable always trigger', R: 'enable replica trigger', D: 'disable trigger' };
      const restore = `alter table document_version ${triggers.map((t) => `${MODES[t.tgenabled]} "${t.tgname}"`).join(', ')}`;
      const on: number[] = [];
      const off: number[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        on.push(await timed([insertVersions(false)]));
        off.push(await timed(['alter table document_version disable trigger user', insertVersions(true), restore, `select ${rebuild}()`]));
        console.log(`bulk: round ${round}: triggers on ${on.at(-1)!.toFixed(0)} ms; triggers off + ${rebuild}() ${off.at(-1)!.toFixed(0)} ms`);
      }
      const { rows: [{ missing }] } = await client.query<{ missing: string }>(`select count(*) as missing from document_version where template_id is null`);
      console.log(`\n| insert of ${Number(documents) * 2} versions in one statement | median of ${ROUNDS} |\n|---|---|`);
      console.log(`| triggers on | ${median(on).toFixed(0)} ms |`);
      console.log(`| triggers off, then ${rebuild}() | ${median(off).toFixed(0)} ms |`);
      console.log(`| ratio on / off | ${(median(on) / median(off)).toFixed(2)}x |`);
      console.log(`| versions left without their template afterwards | ${missing} |`);
    } finally {
      await client.end();
    }
  });
}
