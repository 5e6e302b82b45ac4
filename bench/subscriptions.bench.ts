import 'reflect-metadata';
import { fork } from 'node:child_process';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { createApp, listen } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { DEMO_IDS } from '../src/seed/demo-data';
import { demoToken, withScratchDatabase } from './support';

/**
 * Live dashboards at scale (issue 12): one instance (this process) over a scratch database with 100 more projects
 * of the architect's two organizations, each with a template and 10 invited contractors; 1,000 graphql-ws
 * subscribers (a process of their own: bench/subscription-clients.ts), one connection and one
 * `projectChanged(projectIds: [one project])` each, 10 per project. Then 10 transactions, one after the other,
 * each answering one document in every project (100 answers, 1,000 in all), as the contractor portal would
 * (plain SQL from another connection). Measured per transaction: commit to each subscriber's update (p50, p99 over
 * all updates) and to the last subscriber's, the SQL statements the instance ran, its CPU time; and the instance's
 * memory for the 1,000 subscribers. Once with the default coalescing window (250 ms), once with none (0 ms), which
 * shows the cost of the delivery itself.
 *
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg; loopback only.
 * BENCH_SUBSCRIBERS sets the number of subscribers (default 1000).
 */

const PROJECTS = 100;
const DOCUMENTS_PER_PROJECT = 10;
const ROUNDS = 10;
const SUBSCRIBERS = Math.min(Number(process.env.BENCH_SUBSCRIBERS ?? 1000), 10000);
/** Two keep-alive intervals (12 s each) with every subscriber connected and nothing to send. */
const IDLE_MS = 24_000;
const QUERY = `subscription($ids: [ID!]) { projectChanged(projectIds: $ids) { projectId changes documentIds
  project { id name statistics { id answered mayAnswer declined contractors tenderDocuments
    budgets { total simulatedCost totalAnticipatedTrades totalAnticipatedOffers budgetTradesToAssign { value percent } projectDeviation { value percent } } } } } }`;

const ORGS = [DEMO_IDS.organizations.atelierDemo, DEMO_IDS.organizations.atelierNord];

/** Set-based inserts: the data set in a few statements. */
const BUILD = [
  `insert into contractor (id, created_at, updated_at, legacy_id, organization_id, name, email)
   select gen_random_uuid(), now(), now(), 'SUBSCTR' || lpad((o.n * 100 + i)::text, 10, '0'), o.id, 'Entreprise ' || i, 'live-' || o.n || '-' || i || '@example.test'
   from (values ('${ORGS[0]}'::uuid, 1), ('${ORGS[1]}'::uuid, 2)) as o(id, n) cross join generate_series(1, ${DOCUMENTS_PER_PROJECT}) i`,
  `insert into project (id, created_at, updated_at, legacy_id, organization_id, name, construction_type, trade_list_id, response_type)
   select gen_random_uuid(), now(), now(), 'SUBSPRJ' || lpad(i::text, 10, '0'), (array['${ORGS[0]}', '${ORGS[1]}']::uuid[])[1 + i % 2],
     'Live ' || i, 'office', '${DEMO_IDS.tradeLists.standard}', 'DPGF'
   from generate_series(1, ${PROJECTS}) i`,
  `insert into project_trade (id, created_at, updated_at, legacy_id, project_id, number, name, short_name)
   select gen_random_uuid(), now(), now(), 'SUBSPTR' || substr(p.legacy_id, 8), p.id, '01', 'Gros oeuvre', 'GO'
   from project p where p.legacy_id like 'SUBSPRJ%'`,
  `insert into template (id, created_at, updated_at, legacy_id, project_id, trade_id, budget)
   select gen_random_uuid(), now(), now(), 'SUBSTPL' || substr(pt.legacy_id, 8), pt.project_id, pt.id, 100000
   from project_trade pt where pt.legacy_id like 'SUBSPTR%'`,
  `insert into document (id, created_at, updated_at, legacy_id, template_id, contractor_id)
   select gen_random_uuid(), now(), now(), 'SUBSDOC' || lpad((row_number() over ())::text, 10, '0'), t.id, c.id
   from template t join project p on p.id = t.project_id join contractor c on c.organization_id = p.organization_id and c.legacy_id like 'SUBSCTR%'
   where t.legacy_id like 'SUBSTPL%'`,
];

/** Round r answers the r-th document of every project, in one transaction. */
const ANSWER_ROUND = `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, is_mandate, has_dpgf, sent_at)
  select gen_random_uuid(), now(), now(), d.id, coalesce((select max(v.version) from document_version v where v.document_id = d.id), 0) + 1,
    'ANSWERED', 90000 + $1 * 100, 0, false, true, now()
  from (select d.id, row_number() over (partition by d.template_id order by d.id) - 1 as rank from document d where d.legacy_id like 'SUBSDOC%') d
  where d.rank = $1`;

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const median = (values: number[]) => pct([...values].sort((a, b) => a - b), 50);
const ms = (ns: bigint) => Number(ns) / 1e6;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

type FromClients = { type: 'subscribing' } | { type: 'round'; times: string[]; errors: number } | { type: 'failed'; error: string };

export async function run(): Promise<void> {
  await withScratchDatabase('subscriptions', 10, async (orm: MikroORM, url: string) => {
    const db = new Client({ connectionString: url });
    await db.connect();
    for (const sql of BUILD) await db.query(sql);
    const { rows: projects } = await db.query<{ id: string }>(`select id from project where legacy_id like 'SUBSPRJ%' order by legacy_id`);

    const config = loadConfig({
      NODE_ENV: 'test', PORT: '0', DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_API_POINTS: '1000000000',
      SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER: String(SUBSCRIBERS),
    });
    const app = await createApp({ config, orm, log: createLogger(config) });
    const server = await listen(app, '127.0.0.1', 0);
    config.publicUrl = server.url;
    config.auth.issuer = server.url;
    let statements = 0;
    orm.em.getKnex().on('query', () => { statements++; });

    const token = await demoToken(server.url, 'svc email profile');

    const clients = fork(path.join(__dirname, 'subscription-clients.js'), { stdio: 'inherit' });
    const rounds: Array<(m: { times: string[]; errors: number }) => void> = [];
    clients.on('message', (m: FromClients) => {
      if (m.type === 'failed') console.error(`subscriptions: a subscriber failed: ${m.error}`);
      if (m.type === 'round') rounds.shift()?.(m);
    });
    const active = async () => (await app.metrics.subscriptionsActive.get()).values.reduce((s, v) => s + v.value, 0);

    try {
      global.gc?.();
      const before = process.memoryUsage();
      const cpuBefore = process.cpuUsage();
      const connectStarted = process.hrtime.bigint();
      clients.send({ type: 'start', start: { url: server.url, token, projectIds: projects.map((p) => p.id), count: SUBSCRIBERS, query: QUERY } });
      while ((await active()) < SUBSCRIBERS) await new Promise((r) => setTimeout(r, 50));
      const connectMs = ms(process.hrtime.bigint() - connectStarted);
      const connectCpu = process.cpuUsage(cpuBefore);
      global.gc?.();
      const after = process.memoryUsage();
      console.log(`subscriptions: ${SUBSCRIBERS} subscribers (one connection each, ${SUBSCRIBERS / PROJECTS} per project), ${PROJECTS} projects, ${ROUNDS} transactions of ${PROJECTS} answers`);
      console.log(`subscriptions: connecting and subscribing all: ${(connectMs / 1000).toFixed(2)} s, instance CPU ${((connectCpu.user + connectCpu.system) / 1000).toFixed(0)} ms`);
      console.log(`subscriptions: instance memory with ${SUBSCRIBERS} subscribers: RSS ${mb(after.rss)} (+${mb(after.rss - before.rss)}, ${((after.rss - before.rss) / SUBSCRIBERS / 1024).toFixed(1)} KB per subscriber), heap used ${mb(after.heapUsed)} (+${mb(after.heapUsed - before.heapUsed)}, ${((after.heapUsed - before.heapUsed) / SUBSCRIBERS / 1024).toFixed(1)} KB per subscriber)${global.gc ? '' : ' (run node with --expose-gc for steadier heap figures)'}`);
      console.log(`subscriptions: connecting and subscribing: ${((connectCpu.user + connectCpu.system) / 1000 / SUBSCRIBERS).toFixed(2)} ms of instance CPU per connection`);
      // Idle: what the connections cost with nothing to send (the keep-alive's pings and pongs, timers).
      const idleCpu = process.cpuUsage();
      await new Promise((r) => setTimeout(r, IDLE_MS));
      const idle = process.cpuUsage(idleCpu);
      global.gc?.();
      const idleAfter = process.memoryUsage();
      console.log(`subscriptions: idle for ${IDLE_MS / 1000} s: instance CPU ${((idle.user + idle.system) / 1000).toFixed(0)} ms (${((idle.user + idle.system) / SUBSCRIBERS / (IDLE_MS / 60_000)).toFixed(1)} µs per connection per minute), `
        + `RSS then ${mb(idleAfter.rss)} (+${mb(idleAfter.rss - before.rss)}, ${((idleAfter.rss - before.rss) / SUBSCRIBERS / 1024).toFixed(1)} KB per subscriber), heap +${((idleAfter.heapUsed - before.heapUsed) / SUBSCRIBERS / 1024).toFixed(1)} KB per subscriber`);

      let round = 0;
      const oneRound = async () => {
        const delivered = new Promise<{ times: string[]; errors: number }>((resolve) => rounds.push(resolve));
        const cpu = process.cpuUsage();
        const counted = statements;
        await db.query(ANSWER_ROUND, [round++ % DOCUMENTS_PER_PROJECT]);
        const committed = process.hrtime.bigint();
        const { times, errors } = await delivered;
        const used = process.cpuUsage(cpu);
        if (errors) throw new Error(`${errors} updates carried errors`);
        const latencies = times.map((t) => ms(BigInt(t) - committed)).sort((a, b) => a - b);
        return { latencies, last: latencies[latencies.length - 1], statements: statements - counted, cpuMs: (used.user + used.system) / 1000 };
      };

      for (const windowMs of [250, 0]) {
        config.subscriptions.coalesceMs = windowMs;
        await oneRound(); // warm-up
        const results = [];
        for (let i = 0; i < ROUNDS; i++) results.push(await oneRound());
        const all = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
        const lasts = results.map((r) => r.last).sort((a, b) => a - b);
        console.log(`subscriptions: window ${windowMs} ms: commit → update p50 ${pct(all, 50).toFixed(0)} ms, p99 ${pct(all, 99).toFixed(0)} ms (n=${all.length}); `
          + `commit → last subscriber's update p50 ${pct(lasts, 50).toFixed(0)} ms, p99 ${pct(lasts, 99).toFixed(0)} ms (n=${lasts.length})`);
        console.log(`subscriptions: window ${windowMs} ms: per transaction ${SUBSCRIBERS} updates, ${median(results.map((r) => r.statements))} SQL statements (median; min ${Math.min(...results.map((r) => r.statements))}, max ${Math.max(...results.map((r) => r.statements))}), `
          + `instance CPU ${median(results.map((r) => r.cpuMs)).toFixed(0)} ms (median)`);
      }
      console.log(`subscriptions: instance RSS at the end ${mb(process.memoryUsage().rss)}`);
    } finally {
      const exited = new Promise((resolve) => clients.once('exit', resolve));
      clients.send({ type: 'stop' });
      await exited;
      await db.end();
      await server.close();
      await app.stop();
    }
  });
}
