import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MikroORM } from '@mikro-orm/postgresql';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { ormConfig } from '../mikro-orm.config';
import { adminQuery, withDatabase } from '../src/platform/database/admin';
import { loadDemoData } from '../src/seed/demo-data';
import { freePort } from '../test/support/ports';
import { startCluster, type Cluster } from './bench-cluster';
import { match, namedBeforeReturn, sleep, Subscriber } from './commit-latency';
import { BENCH_PROJECT_IDS_SQL, buildDataset } from './dataset';
import { Fleet, metricSum } from './fanout-fleet';
import { configurationName, report, summary, type Configuration, type RunFigures } from './fanout-report';
import { SenderSampler } from './fanout-senders';
import { clusterCpuMs, machineCpuMs, processCpuMs } from './proc-cpu';
import { demoToken } from './support';
import type { WritersJob, WritersResult } from './write-ceiling-writers';
import { Writers } from './writers-process';

/**
 * Change capture scaled out (issue 39): what a fleet of instances costs the primary's decoding, and how late a commit
 * reaches a subscriber on every instance, with the bus (CHANGE_BUS_URL: one elected decoder publishes to a Redis
 * stream every instance reads) and without it (each instance decodes the WAL itself: a slot and a WAL sender each).
 *
 * - **Its own PostgreSQL cluster** (bench/bench-cluster.ts): the machine's PostgreSQL 15 (BENCH_FANOUT_PG_BIN names
 *   another binaries directory) as the `postgres` user, data under .data/bench-fanout (reset at each run), a free port,
 *   `fsync`, `synchronous_commit` and `full_page_writes` on, `wal_level = logical`, 40 WAL senders and replication slots,
 *   `max_connections = 300`, `shared_buffers = 256MB`. Stopped at the end. Never the machine's server on 5432.
 * - **Data**: one database migrated, loaded with the demo data and BENCH_PROJECTS projects of bench/dataset.ts
 *   (default 100: 800 templates and slices, 4,800 documents), analyzed.
 * - **Configurations**, one after the other, each a fleet of its own started anew (BENCH_FANOUT_CONFIGS, default
 *   `bus:1,bus:2,bus:4,bus:16,own:2,own:16`; BENCH_ROUNDS rounds, default 1, in mirrored order, medians reported):
 *   `bus:N` is N instances with CHANGE_BUS_URL (BENCH_REDIS_URL, default the machine's redis://127.0.0.1:6379) and a
 *   key prefix of this run's own (`bench-fanout-<random>`), `own:N` N instances without it. Between two, every instance
 *   is stopped, the bench waits until the server has no WAL sender left, drops the slots left (the bus's permanent
 *   one) and deletes the bus's keys, so each starts as a new deployment would; the keys are deleted at the end too.
 * - **Instances**: processes of the built service (dist/src/server.js, bench/fanout-fleet.ts), NODE_ENV=production,
 *   DATABASE_URL = DATABASE_DIRECT_URL = the database, one PUBLIC_URL for all (one token serves every instance), the
 *   built-in identity provider, DATABASE_POOL_SIZE=2, WEBHOOK_DELIVERY=false, LOG_LEVEL=warn (their output in
 *   .data/bench-fanout/instances/, WARN and worse lines reported), rate limits in memory and lifted, /metrics behind a
 *   token, SHUTDOWN_GRACE_MS=0; BENCH_SERVER_ENV (JSON) is added to their environment, BENCH_SERVER_NODE_FLAGS to
 *   Node's flags. All of a configuration's instances start at once; it is measured once every instance's /healthz says
 *   `changes.hearing: true` in the expected mode (`bus`, or `in-process` for own) and its subscriber is registered
 *   (graphql_subscriptions_active).
 * - **Subscribers**: one graphql-ws client per instance (on the first BENCH_FANOUT_SUBSCRIBED instances only, when set), `projectChanged(projectIds:)` on BENCH_WATCHED projects
 *   (default 20, spread evenly over the data set), selecting `projectId changes documentIds`.
 * - **Writers** (bench/write-ceiling-writers.ts, a process of its own): BENCH_WRITERS plain `pg` connections (default 8)
 *   writing ANSWERED versions, one per transaction (one autocommit INSERT), at a fixed rate of BENCH_RATE commits per
 *   second in all (default 200: a sixth of what these writes reach on this machine with capture on, docs/benchmarks.md
 *   "write-ceiling"; the same load whatever the configuration, so that the decoding compared is the same WAL), each
 *   writer on its own projects (rank modulo the writers), one document of each in turn. A writer held back catches up,
 *   so the rate holds as long as a commit's round trip stays under writers / rate (40 ms); the table says the rate
 *   achieved, and the WAL senders' CPU per 1,000 commits compares runs that did not hold it. A warm-up of
 *   BENCH_WARMUP_SECONDS (default 3) with each new fleet, then BENCH_SECONDS (default 20) measured, after a checkpoint.
 * - **Commit to subscriber**, per subscriber: the writers time each commit of a watched document when the COMMIT comes
 *   back (epoch clock, shared by the processes of this machine); per document an update names, the latency is its
 *   arrival minus the earliest commit of that document not yet matched, and every commit of it up to the arrival counts
 *   as delivered (bench/commit-latency.ts, as write-ceiling). The 250 ms coalescing window is part of it. Reported over
 *   all subscribers of all instances: p50, p99, max, n; per subscriber the commits delivered of those committed (a
 *   commit no update named within 10 s of the writers' stop is missed; how many of those an update named between the
 *   INSERT's send and the COMMIT's return is said apart: a delivery that beat the COMMIT back to a writer held back).
 *   Each instance's change_delay_seconds (commit, on the server's clock, to heard, before coalescing) is read from
 *   /metrics before and after.
 * - **CPU over the measured window** (from the writers' start to their stop; cores = CPU seconds / wall seconds):
 *   - the WAL senders (bench/fanout-senders.ts): utime + stime of the pids `pg_stat_activity` lists with
 *     `backend_type = 'walsender'`, sampled at the start, every 500 ms and at the end; one that starts within the
 *     window counts from 0, one that ends within it up to its last sample (at most 500 ms of it missed; the table says
 *     how many started and ended);
 *   - the whole cluster: the postmaster and its children from /proc, plus the postmaster's cutime + cstime for the
 *     backends that ended (as write-ceiling);
 *   - the instances, the writers' process, this process, and the machine's idle and iowait (/proc/stat); the rest of
 *     the busy time is other processes of the machine (the bus's Redis among them);
 *   - the bus's Redis, as its INFO counts (the whole server, whose other users count too): its CPU, and its XREADs and
 *     scripts (the decoder's appends, the lease) per second.
 *
 * Targets (issue 39): commit to subscriber p99 ≤ 1 s at 16 instances; WAL senders with the bus at 16 instances within
 * 20 % of 2. With the defaults a run takes about 5 minutes on this machine (2 cores), after the build.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 100);
const WATCHED = Math.min(Number(process.env.BENCH_WATCHED ?? 20), PROJECTS, 100);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * Instances that get a subscriber (default: all). 1 measures the decoding alone: the subscribers' deliveries (a few
 * statements and a GraphQL execution per instance and window) saturate 2 cores at 16 instances, and a WAL sender starved
 * of CPU reads more WAL per wake-up, which makes it look cheaper.
 */
const SUBSCRIBED = process.env.BENCH_FANOUT_SUBSCRIBED ? Number(process.env.BENCH_FANOUT_SUBSCRIBED) : Number.POSITIVE_INFINITY;
const PG_BIN = process.env.BENCH_FANOUT_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const CONFIGS: Configuration[] = (process.env.BENCH_FANOUT_CONFIGS ?? 'bus:1,bus:2,bus:4,bus:16,own:2,own:16').split(',').map((text) => {
  const [mode, n] = text.trim().split(':');
  if ((mode !== 'bus' && mode !== 'own') || !(Number(n) >= 1)) throw new Error(`fanout: BENCH_FANOUT_CONFIGS: "${text}" is not bus:N or own:N`);
  return { mode, instances: Number(n) };
});
/**
 * After the writers stop, the subscribers' last updates are waited for until every watched commit was named, at most
 * this long: past it a commit counts as missed.
 */
const GRACE_MS = 10_000;
const ROOT = path.resolve('.data/bench-fanout');
const SUBSCRIPTION = 'subscription Fanout($ids: [ID!]) { projectChanged(projectIds: $ids) { projectId changes documentIds } }';
const UNUSUAL = new Set(['RESYNC', 'INTERRUPTED', 'RESUMED']);

interface Context {
  url: string;
  admin: Client;
  cluster: Cluster;
  writers: Writers;
  redis: Redis;
  busKeyPrefix: string;
  job: Omit<WritersJob, 'seconds'>;
  watchedProjects: string[];
}

/** Writer i owns the projects of rank i modulo the writers, one document of each in turn; watched projects spread evenly. */
async function plan(admin: Client): Promise<{ documents: string[][]; watchedProjects: string[]; watched: string[] }> {
  const projects = (await admin.query<{ id: string }>(BENCH_PROJECT_IDS_SQL)).rows.map((r) => r.id);
  if (projects.length < WRITERS) throw new Error(`fanout: ${projects.length} projects for ${WRITERS} writers`);
  const { rows } = await admin.query<{ id: string; project_id: string }>(`select d.id, t.project_id from document d
    join template t on t.id = d.template_id where t.project_id = any($1::uuid[]) order by t.project_id, d.legacy_id`, [projects]);
  const byProject = new Map<string, string[]>();
  for (const r of rows) byProject.set(r.project_id, [...(byProject.get(r.project_id) ?? []), r.id]);
  const documents = Array.from({ length: WRITERS }, (_, i) => {
    const lists = projects.filter((_, j) => j % WRITERS === i).map((p) => byProject.get(p) ?? []);
    const order: string[] = [];
    for (let k = 0; k < Math.max(...lists.map((l) => l.length)); k++) for (const l of lists) if (k < l.length) order.push(l[k]);
    return order;
  });
  const watchedProjects = Array.from({ length: WATCHED }, (_, k) => projects[Math.floor((k * projects.length) / WATCHED)]);
  return { documents, watchedProjects, watched: watchedProjects.flatMap((p) => byProject.get(p) ?? []) };
}

function cpuSnapshot(postmaster: number, instances: number[]) {
  const own = process.cpuUsage();
  return {
    at: performance.now(), cluster: clusterCpuMs(postmaster), instances: instances.reduce((n, pid) => n + processCpuMs(pid), 0),
    bench: (own.user + own.system) / 1000, machine: machineCpuMs(),
  };
}

/** change_delay_seconds between two scrapes of every instance: count, mean, and the upper bound of the bucket holding p99. */
function heard(before: string[], after: string[]): RunFigures['heard'] {
  const delta = (name: string, labels = '') => after.reduce((n, text, i) => n + metricSum(text, name, labels) - metricSum(before[i], name, labels), 0);
  const count = delta('change_delay_seconds_count');
  const bounds = [...new Set([...after[0].matchAll(/change_delay_seconds_bucket\{le="([^"]+)"\}/g)].map((m) => m[1]))].filter((le) => le !== '+Inf').map(Number).sort((a, b) => a - b);
  const p99 = bounds.find((le) => delta('change_delay_seconds_bucket', `le="${le}"`) >= 0.99 * count);
  return { count, meanMs: count ? (delta('change_delay_seconds_sum') / count) * 1000 : NaN, p99AtMostMs: p99 === undefined ? null : p99 * 1000 };
}

/** The bus's Redis as INFO counts it so far (the whole server: its other users count too): XREADs, scripts, all commands, CPU ms. */
async function redisCounters(redis: Redis): Promise<{ xread: number; scripts: number; calls: number; cpuMs: number }> {
  const text = `${await redis.info('commandstats')}\n${await redis.info('cpu')}`;
  const calls = (name: string) => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  const cpu = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
  return {
    xread: calls('xread'), scripts: calls('evalsha') + calls('eval'),
    calls: [...text.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0),
    cpuMs: (cpu('used_cpu_user') + cpu('used_cpu_sys')) * 1000,
  };
}

/** Until the server has no WAL sender left (the instances stopped), then drops the slots and the bus's keys left behind. */
async function clearUp(ctx: Context): Promise<void> {
  for (const until = Date.now() + 15_000; Date.now() < until;) {
    const { rows: [r] } = await ctx.admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where backend_type = 'walsender'`);
    if (r.n === 0) break;
    await sleep(200);
  }
  await ctx.admin.query('select pg_drop_replication_slot(slot_name) from pg_replication_slots where not active');
  const keys = await ctx.redis.keys(`${ctx.busKeyPrefix}:*`);
  if (keys.length) await ctx.redis.del(...keys);
}

async function runConfiguration(ctx: Context, config: Configuration, round: number): Promise<RunFigures> {
  const label = `${config.mode}-${config.instances}-round${round}`;
  const startedAt = performance.now();
  const fleet = await Fleet.start({
    databaseUrl: ctx.url, mode: config.mode, instances: config.instances, busUrl: REDIS_URL, busKeyPrefix: ctx.busKeyPrefix,
    logDir: path.join(ROOT, 'instances'), label, env: JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}') as Record<string, string>,
  });
  const startSeconds = (performance.now() - startedAt) / 1000;
  const subscribed = fleet.instances.slice(0, SUBSCRIBED);
  const subscribers = subscribed.map(() => new Subscriber('fanout', SUBSCRIPTION));
  try {
    const token = await demoToken(fleet.instances[0].url);
    await Promise.all(subscribers.map((s, i) => s.start(fleet.instances[i].url, token, ctx.watchedProjects)));
    for (const until = Date.now() + 15_000; ;) {
      const active = await Promise.all(subscribed.map(async (i) => metricSum(await i.metrics(), 'graphql_subscriptions_active', 'subscription="projectChanged"')));
      if (active.every((n) => n >= 1)) break;
      if (Date.now() > until) throw new Error(`fanout: ${label}: subscriptions not active on every instance after 15 s (${active.join(', ')})`);
      await sleep(200);
    }
    const { writers, admin } = ctx;
    if (WARMUP_SECONDS > 0) {
      await writers.ask({ cmd: 'run', job: { ...ctx.job, seconds: WARMUP_SECONDS } }, 'ready');
      await writers.ask({ cmd: 'go' }, 'done');
      await writers.ask({ cmd: 'close' }, 'closed');
      // A coalescing window and a delivery: what the warm-up's last commits need to arrive.
      await sleep(1000);
      const silent = subscribers.filter((s) => s.updates.length === 0).length;
      if (silent) console.log(`fanout: ${label}: WARNING: ${silent} of ${subscribers.length} subscribers got no update during the warm-up`);
    }
    await admin.query('checkpoint');
    await writers.ask({ cmd: 'run', job: { ...ctx.job, seconds: SECONDS } }, 'ready');
    const metricsBefore = await Promise.all(fleet.instances.map((i) => i.metrics()));
    const updatesBefore = subscribers.map((s) => s.updates.length);
    const senders = new SenderSampler(admin);
    const postmaster = ctx.cluster.postmaster();
    const pids = fleet.instances.map((i) => i.pid);
    const redisBefore = await redisCounters(ctx.redis);
    const before = cpuSnapshot(postmaster, pids);
    await senders.start();
    const { result } = await writers.ask<{ result: WritersResult }>({ cmd: 'go' }, 'done');
    const senderFigures = await senders.stop();
    const after = cpuSnapshot(postmaster, pids);
    const redisAfter = await redisCounters(ctx.redis);
    await writers.ask({ cmd: 'close' }, 'closed');
    const since = (s: Subscriber, i: number) => s.updates.slice(updatesBefore[i]);
    const graceUntil = Date.now() + GRACE_MS;
    while (Date.now() < graceUntil && subscribers.some((s, i) => match(result.watchedCommits, since(s, i)).unmatched > 0)) await sleep(250);
    const metricsAfter = await Promise.all(fleet.instances.map((i) => i.metrics()));
    const decoders = await fleet.decoders();

    const latencies: number[] = [];
    const perSubscriber = subscribers.map((s, i) => {
      const updates = since(s, i);
      const matched = match(result.watchedCommits, updates);
      latencies.push(...matched.latencies);
      return {
        watched: result.watchedCommits.length, delivered: result.watchedCommits.length - matched.unmatched, updates: updates.length,
        early: namedBeforeReturn(result.watchedCommits, updates, result.maxMs),
      };
    });
    const wall = after.at - before.at;
    const machineTotal = after.machine.total - before.machine.total;
    const idle = after.machine.idle - before.machine.idle;
    const iowait = after.machine.iowait - before.machine.iowait;
    const cores = (v: number) => v / wall;
    const used = { cluster: after.cluster - before.cluster, instances: after.instances - before.instances, bench: after.bench - before.bench };
    const delta = (name: string) => metricsAfter.reduce((n, text, i) => n + metricSum(text, name) - metricSum(metricsBefore[i], name), 0);
    const figures: RunFigures = {
      config, round, startSeconds, decoders,
      commits: result.commits, rate: result.commits / (result.elapsedMs / 1000), errors: result.errors, firstError: result.firstError,
      roundTripP50: result.p50Ms, roundTripP99: result.p99Ms,
      latencies, subscribers: perSubscriber, heard: heard(metricsBefore, metricsAfter), senders: senderFigures,
      cpu: {
        seconds: wall / 1000, senders: cores(senderFigures.cpuMs), cluster: cores(used.cluster), instances: cores(used.instances),
        writers: result.cpuMs / result.elapsedMs, bench: cores(used.bench),
        others: Math.max(0, cores(machineTotal - idle - iowait - used.cluster - used.instances - used.bench - result.cpuMs)),
        idle: idle / machineTotal, iowait: iowait / machineTotal,
      },
      redis: {
        xreadPerSecond: (redisAfter.xread - redisBefore.xread) / (wall / 1000), scriptsPerSecond: (redisAfter.scripts - redisBefore.scripts) / (wall / 1000),
        callsPerSecond: (redisAfter.calls - redisBefore.calls) / (wall / 1000), cores: cores(redisAfter.cpuMs - redisBefore.cpuMs),
      },
      unusualUpdates: subscribers.reduce((n, s, i) => n + since(s, i).filter((u) => u.changes?.some((k) => UNUSUAL.has(k))).length, 0),
      gaps: delta('change_gaps_total'), heartbeatsMissed: delta('change_listener_heartbeats_missed_total'),
      subscriberErrors: subscribers.flatMap((s) => s.errors),
      logProblems: fleet.instances.flatMap((i) => i.problems()),
    };
    if (figures.rate < 0.95 * RATE) console.log(`fanout: ${label}: WARNING: ${figures.rate.toFixed(0)} commits/s achieved of the ${RATE} offered`);
    console.log(summary(figures));
    return figures;
  } finally {
    await Promise.all(subscribers.map((s) => s.stop().catch(() => undefined)));
    await fleet.stop();
    await clearUp(ctx);
  }
}

export async function run(): Promise<void> {
  const started = performance.now();
  const port = await freePort();
  const cluster = startCluster(port, {
    root: ROOT, pgBin: PG_BIN, bench: 'fanout', pgBinVariable: 'BENCH_FANOUT_PG_BIN', source: 'bench/fanout.bench.ts',
    // A WAL sender and a slot per instance without the bus (16), and room for the instances' pools and the writers.
    settings: ['max_wal_senders = 40', 'max_replication_slots = 40', 'max_connections = 300', 'shared_buffers = 256MB'],
  });
  console.log(`fanout: own cluster on 127.0.0.1:${port} (${PG_BIN}), data in ${cluster.dataDir}`);
  const database = 'fanout';
  const url = withDatabase(cluster.serverUrl, database);
  const admin = new Client({ connectionString: url, application_name: 'fanout admin' });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const busKeyPrefix = `bench-fanout-${randomBytes(4).toString('hex')}`;
  let writers: Writers | null = null;
  try {
    await adminQuery(cluster.serverUrl, `create database "${database}"`);
    const orm = await MikroORM.init(ormConfig(url, { pool: { min: 0, max: 2 } }));
    try {
      await orm.getMigrator().up();
      await loadDemoData(orm.em.fork());
      const execute = <T>(sql: string) => orm.em.fork().getConnection().execute(sql) as Promise<T>;
      const counts = await buildDataset(execute, { projects: PROJECTS });
      console.log(`fanout: data set of ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, `
        + `${counts.versions} versions, ready ${((performance.now() - started) / 1000).toFixed(1)} s after the start`);
    } finally {
      await orm.close(true);
    }
    await admin.connect();
    await admin.query('analyze');
    await redis.connect();
    const settings = (await admin.query<{ name: string; setting: string }>(`select name, setting from pg_settings where name in ('wal_level', 'fsync',
      'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_replication_slots', 'max_wal_senders', 'max_connections', 'server_version')`)).rows;
    console.log(`fanout: ${settings.map((s) => `${s.name}=${s.setting}`).join(', ')}; bus ${REDIS_URL}, keys ${busKeyPrefix}:*`);
    const { documents, watchedProjects, watched } = await plan(admin);
    console.log(`fanout: ${WRITERS} writers at ${RATE} commits/s over ${documents.reduce((n, d) => n + d.length, 0)} documents; `
      + `subscribers on ${watchedProjects.length} projects (${watched.length} documents); configurations ${CONFIGS.map(configurationName).join(', ')}`);
    writers = Writers.start('fanout');
    const ctx: Context = {
      url, admin, cluster, writers, redis, busKeyPrefix, watchedProjects,
      job: { url, documents, watched, ratePerSecond: RATE, applicationName: 'fanout writer' },
    };
    const runs: RunFigures[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const config of round % 2 ? CONFIGS : [...CONFIGS].reverse()) runs.push(await runConfiguration(ctx, config, round));
    }
    report(runs, CONFIGS, { seconds: SECONDS, rounds: ROUNDS, writers: WRITERS, rate: RATE, watched: WATCHED, projects: PROJECTS });
    console.log(`\nfanout: done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    writers?.exit();
    await admin.end().catch(() => undefined);
    const keys = await redis.keys(`${busKeyPrefix}:*`).catch(() => []);
    if (keys.length) await redis.del(...keys).catch(() => undefined);
    redis.disconnect();
    cluster.stop();
  }
}
