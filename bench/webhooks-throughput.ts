import os from 'node:os';
import path from 'node:path';
import { rmSync } from 'node:fs';
import type { Client } from 'pg';
import { epochMs, percentile, sleep } from './commit-latency';
import { BENCH_PROJECT_IDS_SQL } from './dataset';
import { Fleet } from './fanout-fleet';
import { clusterCpuMs, machineCpuMs, processCpuMs } from './proc-cpu';
import { demoToken } from './support';
import {
  afterFleet, changeBus, createEndpoint, DELIVERING, EMPTY_OUTBOX, ORGANIZATIONS, outbox, resetStatements, ROOT, statementStats,
  type StatementFigures, type WebhooksCluster,
} from './webhooks-cluster';
import { monotonicUs, profileLines, summarizeProfiles } from './webhooks-profile';
import { HookReceiver } from './webhooks-receivers';
import type { WritersResult } from './write-ceiling-writers';
import { Writers } from './writers-process';

// The throughput part of `npm run bench webhooks` (issue 40; described in bench/webhooks.bench.ts): deliveries per
// second against commits per second, 32 writers held at one rate, one instance and two.

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 32);
const RATE = Number(process.env.BENCH_WEBHOOKS_RATE ?? 1000);
const DRAIN_SECONDS = Number(process.env.BENCH_DRAIN_SECONDS ?? 120);
const INSTANCES = (process.env.BENCH_WEBHOOKS_INSTANCES ?? '1,2').split(',').map(Number);
const PROFILE = process.env.BENCH_WEBHOOKS_PROFILE === '1';
const ANALYZE = 'analyze webhook_endpoint, webhook_event, webhook_delivery, webhook_attempt';

interface Figures {
  instances: number;
  writers: WritersResult;
  commitsPerSecond: number;
  queuedPerSecond: number;
  receivedPerSecond: number;
  /** Pending deliveries when the writers stopped. */
  backlog: number;
  /** From the writers' stop to the last receipt of the window's commits, ms; null when not all arrived. */
  drainMs: number | null;
  /** Window's commits never received within BENCH_DRAIN_SECONDS. */
  missing: number;
  duplicates: number;
  unsuccessful: string;
  /** Commit to receipt, ms, every commit of the window that was received. */
  latencies: number[];
  /** The measured window, ms (CPU in cores is CPU time over it). */
  windowMs: number;
  cpu: { service: number; cluster: number; writers: number; bench: number; idle: number; iowait: number };
  statements: StatementFigures[];
  profile: string[];
}

/** Writer i owns the projects of rank i modulo the writers and writes one document of each in turn (as write-ceiling). */
async function plan(admin: Client): Promise<string[][]> {
  const projects = (await admin.query<{ id: string }>(BENCH_PROJECT_IDS_SQL)).rows.map((r) => r.id);
  if (projects.length < WRITERS) throw new Error(`webhooks: ${projects.length} projects for ${WRITERS} writers (BENCH_PROJECTS)`);
  const { rows } = await admin.query<{ id: string; project_id: string }>(`select d.id, t.project_id from document d
    join template t on t.id = d.template_id where t.project_id = any($1::uuid[]) order by t.project_id, d.legacy_id`, [projects]);
  const byProject = new Map<string, string[]>();
  for (const r of rows) byProject.set(r.project_id, [...(byProject.get(r.project_id) ?? []), r.id]);
  return Array.from({ length: WRITERS }, (_, i) => {
    const lists = projects.filter((_, j) => j % WRITERS === i).map((p) => byProject.get(p) ?? []);
    const order: string[] = [];
    for (let k = 0; k < Math.max(...lists.map((l) => l.length)); k++) for (const l of lists) if (k < l.length) order.push(l[k]);
    return order;
  });
}

function cpuSnapshot(postmaster: number, pids: number[]) {
  const own = process.cpuUsage();
  return {
    at: epochMs(), cluster: clusterCpuMs(postmaster), service: pids.reduce((n, pid) => n + processCpuMs(pid), 0),
    bench: (own.user + own.system) / 1000, machine: machineCpuMs(),
  };
}

async function drain(admin: Client): Promise<number> {
  const deadline = Date.now() + DRAIN_SECONDS * 1000;
  let { pending } = await outbox(admin);
  while (pending > 0 && Date.now() < deadline) {
    await sleep(100);
    ({ pending } = await outbox(admin));
  }
  return pending;
}

async function measure(db: WebhooksCluster, writers: Writers, receiver: HookReceiver, documents: string[][], instances: number): Promise<Figures> {
  const { admin, cluster, url } = db;
  const label = `throughput-${instances}`;
  const profileDir = path.join(ROOT, 'profiles', label);
  rmSync(profileDir, { recursive: true, force: true });
  const bus = changeBus(label);
  const fleet = await Fleet.start({
    databaseUrl: url, ...bus, instances, logDir: path.join(ROOT, 'instances'), label,
    env: { ...DELIVERING, WEBHOOK_MAX_ATTEMPTS_PER_SECOND: '100000', ...JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}') as Record<string, string> },
    nodeFlags: PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  let window = { fromUs: 0, toUs: 0 };
  let figures: Omit<Figures, 'profile'>;
  try {
    const token = await demoToken(fleet.instances[0].url);
    const { rows: [{ n }] } = await admin.query<{ n: number }>('select count(*)::int as n from webhook_endpoint');
    if (n === 0) {
      for (const [name, id] of Object.entries(ORGANIZATIONS)) await createEndpoint(fleet.instances[0].url, token, id, `${receiver.url}/hook/${name}`, 'webhooks bench, throughput');
    }
    await admin.query(EMPTY_OUTBOX);
    receiver.reset();
    const job = { url, documents, watched: [], ratePerSecond: RATE, applicationName: 'webhooks writer' };
    if (WARMUP_SECONDS > 0) {
      await writers.ask({ cmd: 'run', job: { ...job, seconds: WARMUP_SECONDS } }, 'ready');
      await writers.ask({ cmd: 'go' }, 'done');
      await writers.ask({ cmd: 'close' }, 'closed');
      const left = await drain(admin);
      if (left) console.log(`webhooks: ${label}: ${left} deliveries of the warm-up still pending after ${DRAIN_SECONDS} s`);
    }
    await admin.query(ANALYZE);
    await admin.query('checkpoint');
    await writers.ask({ cmd: 'run', job: { ...job, seconds: SECONDS, recordCommits: true } }, 'ready');
    if (db.statements) await resetStatements(admin);
    const attemptsSince = (await admin.query<{ now: Date }>('select clock_timestamp() as now')).rows[0].now;
    const outboxBefore = await outbox(admin);
    const postmaster = cluster.postmaster();
    const pids = fleet.instances.map((i) => i.pid);
    const before = cpuSnapshot(postmaster, pids);
    window = { fromUs: monotonicUs(), toUs: 0 };
    const { result } = await writers.ask<{ result: WritersResult }>({ cmd: 'go' }, 'done');
    window.toUs = monotonicUs();
    const after = cpuSnapshot(postmaster, pids);
    const outboxAfter = await outbox(admin);
    const statements = db.statements ? await statementStats(admin) : [];
    await writers.ask({ cmd: 'close' }, 'closed');

    const committed = new Map<string, number>();
    for (const [document, version, at] of result.commitTimes ?? []) committed.set(`${document}:${version}`, at);
    const pending = await drain(admin);
    // Late duplicates, and the attempts' rows (written every 20 ms).
    await sleep(500);
    const latencies: number[] = [];
    let last = 0;
    for (const r of receiver.first.values()) {
      const { data } = JSON.parse(r.body) as { data: { document_id: string; version: number } };
      const at = committed.get(`${data.document_id}:${data.version}`);
      if (at === undefined) continue;
      latencies.push(r.at - at);
      last = Math.max(last, r.at);
    }
    const { rows: failures } = await admin.query<{ outcome: string; error: string | null; n: number }>(`select outcome, error, count(*)::int as n
      from webhook_attempt where attempted_at >= $1 and outcome <> 'succeeded' group by 1, 2 order by 3 desc`, [attemptsSince]);
    const seconds = (after.at - before.at) / 1000;
    const wallMs = after.at - before.at;
    const machine = after.machine.total - before.machine.total;
    figures = {
      instances, writers: result, commitsPerSecond: result.commits / (result.elapsedMs / 1000),
      queuedPerSecond: (outboxAfter.total - outboxBefore.total) / seconds,
      receivedPerSecond: receiver.between(before.at, after.at) / seconds,
      backlog: outboxAfter.pending,
      drainMs: pending === 0 && latencies.length === committed.size ? Math.max(0, last - after.at) : null,
      missing: committed.size - latencies.length,
      duplicates: receiver.duplicates,
      unsuccessful: failures.map((f) => `${f.n} ${f.outcome}${f.error ? ` (${f.error})` : ''}`).join(', ') || 'none',
      latencies,
      windowMs: wallMs,
      cpu: {
        service: (after.service - before.service) / wallMs, cluster: (after.cluster - before.cluster) / wallMs,
        writers: result.cpuMs / result.elapsedMs, bench: (after.bench - before.bench) / wallMs,
        idle: (after.machine.idle - before.machine.idle) / machine, iowait: (after.machine.iowait - before.machine.iowait) / machine,
      },
      statements,
    };
    const problems = fleet.instances.flatMap((i) => i.problems());
    if (problems.length) console.log(`webhooks: ${label}: ${problems.length} WARN+ log line(s), the first: ${problems.slice(0, 3).join(' || ').slice(0, 600)}`);
  } finally {
    await fleet.stop();
    await afterFleet(admin);
    await bus.clear();
  }
  const profile = PROFILE ? summarizeProfiles(profileDir, window.fromUs, window.toUs) : null;
  if (PROFILE && !profile) console.log(`webhooks: ${label}: no CPU profile in ${profileDir} (an instance killed at its stop writes none)`);
  const result: Figures = { ...figures, profile: profile ? profileLines(`${instances} instance(s)`, profile, figures.cpu.service * figures.windowMs) : [] };
  console.log(summary(result));
  if (result.commitsPerSecond < 0.95 * RATE) {
    console.log(`webhooks: ${label}: WARNING: ${fmt(result.commitsPerSecond)} commits/s achieved of the ${RATE} offered: the configurations compare only at the same achieved rate`);
  }
  return result;
}

const fmt = (v: number, digits = 0) => (Number.isNaN(v) ? '-' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const ms = (v: number) => (Number.isNaN(v) ? '-' : v >= 10_000 ? `${fmt(v / 1000, 1)} s` : `${fmt(v)} ms`);

function summary(f: Figures): string {
  return `webhooks: throughput, ${f.instances} instance(s): ${f.writers.commits} commits at ${fmt(f.commitsPerSecond)}/s (offered ${RATE}; round trip p50 `
    + `${f.writers.p50Ms.toFixed(1)} ms, p99 ${f.writers.p99Ms.toFixed(1)} ms; ${f.writers.errors} errors); deliveries queued ${fmt(f.queuedPerSecond)}/s, `
    + `received ${fmt(f.receivedPerSecond)}/s during the window (${(f.receivedPerSecond / f.commitsPerSecond).toFixed(2)}x commits); ${f.backlog} pending at the end; `
    + `${f.drainMs === null ? `NOT drained (${f.missing} not received) within ${DRAIN_SECONDS} s` : `drained ${(f.drainMs / 1000).toFixed(1)} s after the writers' stop`}; `
    + `${f.duplicates} duplicates; unsuccessful attempts: ${f.unsuccessful}; commit → receipt p50 ${ms(percentile(f.latencies, 50))} p99 ${ms(percentile(f.latencies, 99))} `
    + `(n = ${f.latencies.length}); CPU (cores): service ${f.cpu.service.toFixed(2)}, PostgreSQL ${f.cpu.cluster.toFixed(2)}, writers ${f.cpu.writers.toFixed(2)}, `
    + `bench (receiver) ${f.cpu.bench.toFixed(2)}; machine idle ${(f.cpu.idle * 100).toFixed(0)} % + iowait ${(f.cpu.iowait * 100).toFixed(0)} %; load average ${os.loadavg()[0].toFixed(1)}`;
}

function report(runs: Figures[]): void {
  const rows: Array<[string, (f: Figures) => string]> = [
    ['commits/s achieved (offered)', (f) => `${fmt(f.commitsPerSecond)} (${RATE})`],
    ['commit round trip p50 / p99', (f) => `${f.writers.p50Ms.toFixed(1)} / ${f.writers.p99Ms.toFixed(1)} ms`],
    ['deliveries queued/s', (f) => fmt(f.queuedPerSecond)],
    ['**deliveries received/s during the window**', (f) => `**${fmt(f.receivedPerSecond)}**`],
    ['**deliveries / commits** (target ≥ 1x)', (f) => `**${(f.receivedPerSecond / f.commitsPerSecond).toFixed(2)}x**`],
    ['backlog (pending) when the writers stopped', (f) => fmt(f.backlog)],
    ['time to drain after the writers\' stop', (f) => (f.drainMs === null ? `not drained in ${DRAIN_SECONDS} s (${f.missing} missing)` : `${(f.drainMs / 1000).toFixed(1)} s`)],
    ['delivered/s while draining (backlog / time to drain), for comparison', (f) => (f.drainMs ? fmt(f.backlog / (f.drainMs / 1000)) : '-')],
    ['duplicates; unsuccessful attempts', (f) => `${f.duplicates}; ${f.unsuccessful}`],
    ['commit → receipt p50 / p99 / max', (f) => `${ms(percentile(f.latencies, 50))} / ${ms(percentile(f.latencies, 99))} / ${ms(f.latencies.length ? Math.max(...f.latencies) : NaN)} (n = ${fmt(f.latencies.length)})`],
    ['CPU, cores: service (all instances) / PostgreSQL', (f) => `${f.cpu.service.toFixed(2)} / ${f.cpu.cluster.toFixed(2)}`],
    ['CPU, cores: writers / bench (receiver)', (f) => `${f.cpu.writers.toFixed(2)} / ${f.cpu.bench.toFixed(2)}`],
    [`machine idle + iowait, % of ${os.cpus().length} cores`, (f) => `${(f.cpu.idle * 100).toFixed(0)} + ${(f.cpu.iowait * 100).toFixed(0)}`],
  ];
  console.log(`\nwebhooks: throughput: ${WRITERS} writers at ${RATE} commits/s offered, ${SECONDS} s, one endpoint per organization (contractor.answered), `
    + 'WEBHOOK_MAX_ATTEMPTS_PER_SECOND=100000, the rest of the webhooks\' settings as shipped\n');
  console.log(`| | ${runs.map((f) => `${f.instances} instance${f.instances > 1 ? 's' : ''}`).join(' | ')} |`);
  console.log(`|---|${runs.map(() => '---').join('|')}|`);
  for (const [name, cell] of rows) console.log(`| ${name} | ${runs.map(cell).join(' | ')} |`);
  for (const f of runs) {
    if (f.statements.length) {
      console.log(`\nwebhooks: ${f.instances} instance(s): pg_stat_statements over the window, statements naming a webhook table, by total time:`);
      console.log('| statement | calls | mean | total | rows | text |\n|---|---|---|---|---|---|');
      for (const s of f.statements) console.log(`| ${s.label} | ${fmt(s.calls)} | ${s.meanMs.toFixed(2)} ms | ${fmt(s.totalMs)} ms | ${fmt(s.rows)} | \`${s.query}\` |`);
    }
    if (f.profile.length) console.log(`\n${f.profile.join('\n')}`);
  }
}

export async function throughput(db: WebhooksCluster): Promise<void> {
  const receiver = await new HookReceiver().start();
  const writers = Writers.start('webhooks');
  try {
    const documents = await plan(db.admin);
    console.log(`webhooks: throughput: ${WRITERS} writers at ${RATE} commits/s over ${documents.reduce((n, d) => n + d.length, 0)} documents; `
      + `configurations: ${INSTANCES.join(', ')} instance(s)${PROFILE ? '; CPU profiles (--cpu-prof)' : ''}`);
    const runs: Figures[] = [];
    for (const n of INSTANCES) runs.push(await measure(db, writers, receiver, documents, n));
    report(runs);
  } finally {
    writers.exit();
    await receiver.close();
  }
}
