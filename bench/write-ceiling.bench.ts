import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { ormConfig } from '../mikro-orm.config';
import { adminQuery, withDatabase } from '../src/platform/database/admin';
import { DEMO_IDS, loadDemoData } from '../src/seed/demo-data';
import { freePort } from '../test/support/ports';
import { startCluster, type Cluster } from './bench-cluster';
import { epochMs, match, median, percentile, sleep, Subscriber } from './commit-latency';
import { BENCH_PROJECT_IDS_SQL, buildDataset } from './dataset';
import { clusterCpuMs, machineCpuMs, processCpuMs } from './proc-cpu';
import { ServerProcess } from './server-process';
import { demoToken } from './support';
import type { WritersJob, WritersResult } from './write-ceiling-writers';
import { Writers } from './writers-process';

/**
 * The write ceiling (issue 32): what change capture costs concurrent writers, on a cluster as durable as production.
 *
 * - **Its own PostgreSQL cluster**: `initdb` and `pg_ctl` of the machine's PostgreSQL 15 (BENCH_CEILING_PG_BIN names
 *   another binaries directory), run as the `postgres` user, data under .data/bench-ceiling (reset at each run), on a
 *   free port; `wal_level = logical`, 20 replication slots and WAL senders, `fsync` and `synchronous_commit` on (group
 *   commit matters), `shared_buffers = 256MB`. Stopped at the end. Never the machine's server on 5432.
 * - **Data**: a database migrated and loaded with the demo data, plus the 1,005-project data set (bench/dataset.ts,
 *   BENCH_PROJECTS projects, default 1,000).
 * - **The service** in a process of its own (bench/server-process.ts, production configuration, DATABASE_URL =
 *   DATABASE_DIRECT_URL = that database), WEBHOOK_MAX_ATTEMPTS_PER_SECOND=100000 (no pacing). One webhook endpoint per
 *   organization of the data set (Atelier Demo and Atelier Nord: the demo architect administers both, so they are
 *   created over REST), subscribed to `contractor.answered`, pointing at a receiver in this process that answers 200
 *   at once and counts deliveries.
 * - **A live subscriber**: a graphql-ws client in this process, `projectChanged(projectIds:)` on BENCH_WATCHED
 *   projects (default 32, at most the writers), each the first project of a different writer; it records when each
 *   update arrives.
 * - **Writers**: BENCH_WRITERS (default 32) plain `pg` clients, each its own connection, in a process of their own
 *   (bench/write-ceiling-writers.ts), inserting ANSWERED versions in a closed loop for BENCH_SECONDS (default 20),
 *   one version per transaction (one autocommit INSERT with the document's next version number). Writer i owns the
 *   projects whose rank is i modulo the writers: no two writers touch the same document, template, project or
 *   statistics row. Each writes its documents round robin, one document of each of its projects in turn.
 * - **Commit to subscriber**: each commit of a watched document is timed when the client gets the COMMIT back (epoch
 *   clock with sub-millisecond resolution, shared by the processes of this machine); an update names its documents
 *   (`documentIds`); per document named, the latency is the update's arrival minus the earliest commit of that
 *   document not yet matched, and every commit of it up to the arrival counts as delivered. The coalescing window
 *   (SUBSCRIPTIONS_COALESCE_MS, 250 ms as shipped) is part of it.
 * - **The notification queue's lock**: another connection samples pg_locks every 25 ms: sessions waiting (`not
 *   granted`) on locktype `object`, classid `pg_database`, objid 0, the lock PreCommit_Notify takes.
 * - **Modes**, each BENCH_SECONDS, BENCH_ROUNDS rounds (default 3) in mirrored order (off, on, bare, bare, on, off, ...: a
 *   linear drift of the machine weighs alike on every mode), medians reported:
 *   - `on`: everything as shipped;
 *   - `off`: change capture off: every trigger whose name starts with `change_event_` disabled (`alter table ...
 *     disable trigger`); the webhook outbox's (`webhook_event_*`) and the callers' (`caller_*`) as they are;
 *   - `bare`: the `change_event_*` and `webhook_event_*` triggers disabled: the write with neither change capture nor
 *     outbox (statistics and derived data still maintained), the table's own ceiling for reference.
 *   Triggers are put back as they were (same ENABLE mode) after each run and at the end.
 * - **CPU**, per run: the writers' process (process.cpuUsage over its window), the PostgreSQL cluster's processes (utime
 *   + stime of the postmaster and its children from /proc, plus the postmaster's cutime + cstime for backends that
 *   ended), the service's process, this process, and the machine's idle and iowait time (/proc/stat). The writers
 *   count as CPU-bound when their process uses 80 % of a core or more (Node runs them on one thread); the machine
 *   counts as saturated when less than 5 % of its CPU was idle, and the report says who used it (other processes of
 *   the machine included).
 * - **Webhooks**: deliveries received per second during the run, and the backlog (pending deliveries) when the
 *   writers stop; before the next run the backlog is left to drain (at most BENCH_DRAIN_SECONDS, default 60).
 *
 * A warm-up of BENCH_WARMUP_SECONDS (default 5, mode on) runs first and is not counted. Other settings:
 * BENCH_PROJECTS, BENCH_LOCK_SAMPLE_MS (25), BENCH_SERVER_ENV (JSON, added to the service's environment), BENCH_MODES
 * (comma-separated subset of on,off,bare).
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 32);
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 1000);
const WATCHED = Math.min(Number(process.env.BENCH_WATCHED ?? 32), WRITERS, 100);
const LOCK_SAMPLE_MS = Number(process.env.BENCH_LOCK_SAMPLE_MS ?? 25);
const DRAIN_SECONDS = Number(process.env.BENCH_DRAIN_SECONDS ?? 60);
/** After the writers stop: the subscriber's last updates (a coalescing window and the delivery). */
const GRACE_MS = 2000;
const PG_BIN = process.env.BENCH_CEILING_PG_BIN ?? '/usr/lib/postgresql/15/bin';

type Mode = 'on' | 'off' | 'bare';
const MODES = (process.env.BENCH_MODES ?? 'off,on,bare').split(',').map((m) => m.trim()) as Mode[];

const MODE_MEANS: Record<Mode, string> = {
  on: 'as shipped: change capture, webhook outbox and callers triggers all enabled',
  off: 'change capture off: triggers change_event_* disabled; webhook outbox (webhook_event_*) and callers triggers enabled',
  bare: 'neither change capture nor outbox: change_event_* and webhook_event_* disabled (statistics, derived data on)',
};

// ---------------------------------------------------------------------------------------------------------------
// CPU

interface CpuSnapshot {
  at: number;
  cluster: number;
  service: number;
  bench: number;
  machine: { total: number; idle: number; iowait: number };
}

function cpuSnapshot(postmaster: number, servicePid: number): CpuSnapshot {
  const own = process.cpuUsage();
  return {
    at: performance.now(), cluster: clusterCpuMs(postmaster), service: processCpuMs(servicePid),
    bench: (own.user + own.system) / 1000, machine: machineCpuMs(),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Webhook receiver, lock sampler

class Receiver {
  /** Arrival of every delivery (epoch ms). */
  readonly arrivals: number[] = [];
  readonly ids = new Set<string>();
  duplicates = 0;
  url = '';
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      this.arrivals.push(epochMs());
      const id = String(req.headers['webhook-id']);
      if (this.ids.has(id)) this.duplicates++;
      else this.ids.add(id);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  between(from: number, to: number): number {
    return this.arrivals.filter((t) => t >= from && t <= to).length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface LockFigures {
  samples: number;
  /** Samples that saw at least one waiting session. */
  samplesWaiting: number;
  /** Waiting sessions summed over the samples. */
  waitingTotal: number;
  maxAtOnce: number;
  /** Sessions holding it, summed over the samples (0 or 1 each). */
  heldTotal: number;
}

/** Samples pg_locks every LOCK_SAMPLE_MS from a connection of its own until `stop`. */
class LockSampler {
  private figures: LockFigures = { samples: 0, samplesWaiting: 0, waitingTotal: 0, maxAtOnce: 0, heldTotal: 0 };
  private running = false;
  private loop: Promise<void> | null = null;
  constructor(private readonly client: Client) {}

  start(): void {
    this.figures = { samples: 0, samplesWaiting: 0, waitingTotal: 0, maxAtOnce: 0, heldTotal: 0 };
    this.running = true;
    this.loop = (async () => {
      let next = performance.now();
      while (this.running) {
        const { rows: [r] } = await this.client.query<{ waiting: number; held: number }>(`select
            count(*) filter (where not granted)::int as waiting, count(*) filter (where granted)::int as held
          from pg_locks where locktype = 'object' and classid = 'pg_database'::regclass and objid = 0`);
        const f = this.figures;
        f.samples++;
        f.waitingTotal += r.waiting;
        f.heldTotal += r.held;
        if (r.waiting > 0) f.samplesWaiting++;
        f.maxAtOnce = Math.max(f.maxAtOnce, r.waiting);
        next += LOCK_SAMPLE_MS;
        await sleep(Math.max(0, next - performance.now()));
      }
    })();
  }

  async stop(): Promise<LockFigures> {
    this.running = false;
    await this.loop;
    return this.figures;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Triggers

interface Trigger {
  table: string;
  name: string;
  /** pg_trigger.tgenabled: O (origin, the default), A (always), R (replica), D (disabled). */
  enabled: string;
}

const ENABLE: Record<string, string> = { O: 'enable trigger', A: 'enable always trigger', R: 'enable replica trigger', D: 'disable trigger' };

async function captureTriggers(client: Client): Promise<{ capture: Trigger[]; outbox: Trigger[] }> {
  const { rows } = await client.query<Trigger>(`select c.relname as table, t.tgname as name, t.tgenabled as enabled
    from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where not t.tgisinternal and (t.tgname like 'change\\_event\\_%' or t.tgname like 'webhook\\_event\\_%')
    order by c.relname, t.tgname`);
  return { capture: rows.filter((t) => t.name.startsWith('change_event_')), outbox: rows.filter((t) => t.name.startsWith('webhook_event_')) };
}

async function setMode(client: Client, triggers: { capture: Trigger[]; outbox: Trigger[] }, mode: Mode | 'restore'): Promise<void> {
  const off = new Set<Trigger>(mode === 'off' ? triggers.capture : mode === 'bare' ? [...triggers.capture, ...triggers.outbox] : []);
  const byTable = new Map<string, string[]>();
  for (const t of [...triggers.capture, ...triggers.outbox]) {
    const action = off.has(t) ? 'disable trigger' : ENABLE[t.enabled] ?? 'enable trigger';
    byTable.set(t.table, [...(byTable.get(t.table) ?? []), `${action} "${t.name}"`]);
  }
  for (const [table, actions] of byTable) await client.query(`alter table "${table}" ${actions.join(', ')}`);
}

// ---------------------------------------------------------------------------------------------------------------
// One run

interface RunFigures {
  mode: Mode;
  label: string;
  writers: WritersResult;
  tps: number;
  locks: LockFigures;
  /** Commit to subscriber, ms. */
  latencies: number[];
  /** Commits of watched documents no update named. */
  unmatched: number;
  watchedCommits: number;
  updates: number;
  deliveries: number;
  deliveriesPerSecond: number;
  enqueued: number;
  backlog: number;
  cpu: {
    seconds: number;
    writers: number;
    cluster: number;
    service: number;
    bench: number;
    machineBusy: number;
    idle: number;
    iowait: number;
    /** Busy CPU of the machine that is none of the above (other work on the machine), cores. */
    others: number;
    cores: number;
  };
}

interface Context {
  admin: Client;
  cluster: Cluster;
  server: ServerProcess;
  writers: Writers;
  job: Omit<WritersJob, 'seconds'>;
  receiver: Receiver;
  subscriber: Subscriber;
  sampler: LockSampler;
  triggers: { capture: Trigger[]; outbox: Trigger[] };
}

async function outbox(admin: Client): Promise<{ total: number; pending: number }> {
  const { rows: [r] } = await admin.query<{ total: number; pending: number }>(`select count(*)::int as total,
    count(*) filter (where status = 'pending')::int as pending from webhook_delivery`);
  return r;
}

async function drain(admin: Client): Promise<number> {
  const deadline = Date.now() + DRAIN_SECONDS * 1000;
  let pending = (await outbox(admin)).pending;
  while (pending > 0 && Date.now() < deadline) {
    await sleep(250);
    pending = (await outbox(admin)).pending;
  }
  return pending;
}

async function runOnce(ctx: Context, mode: Mode, label: string, seconds: number): Promise<RunFigures> {
  const { admin, cluster, server, writers, receiver, subscriber, sampler } = ctx;
  await setMode(admin, ctx.triggers, mode);
  const leftover = await drain(admin);
  if (leftover) console.log(`write-ceiling: ${label}: ${leftover} webhook deliveries still pending after ${DRAIN_SECONDS} s of drain`);
  await admin.query('checkpoint');
  await writers.ask({ cmd: 'run', job: { ...ctx.job, seconds } }, 'ready');
  const outboxBefore = await outbox(admin);
  const postmaster = cluster.postmaster();
  const before = cpuSnapshot(postmaster, server.pid);
  const from = epochMs();
  const updatesBefore = subscriber.updates.length;
  sampler.start();
  const { result } = await writers.ask<{ result: WritersResult }>({ cmd: 'go' }, 'done');
  const locks = await sampler.stop();
  const to = epochMs();
  const after = cpuSnapshot(postmaster, server.pid);
  const outboxAfter = await outbox(admin);
  await writers.ask({ cmd: 'close' }, 'closed');
  await sleep(GRACE_MS);
  const { latencies, unmatched } = match(result.watchedCommits, subscriber.updates.slice(updatesBefore));
  const deliveries = receiver.between(from, to);
  const wall = after.at - before.at;
  const machineTotal = after.machine.total - before.machine.total;
  const cores = os.cpus().length;
  const idle = after.machine.idle - before.machine.idle;
  const iowait = after.machine.iowait - before.machine.iowait;
  const toCores = (ms: number) => ms / wall;
  const busyMs = machineTotal - idle - iowait;
  const figures: RunFigures = {
    mode, label, writers: result, tps: result.commits / (result.elapsedMs / 1000), locks, latencies, unmatched,
    watchedCommits: result.watchedCommits.length, updates: subscriber.updates.length - updatesBefore,
    deliveries, deliveriesPerSecond: deliveries / ((to - from) / 1000),
    enqueued: outboxAfter.total - outboxBefore.total, backlog: outboxAfter.pending,
    cpu: {
      seconds: wall / 1000,
      writers: result.cpuMs / result.elapsedMs,
      cluster: toCores(after.cluster - before.cluster),
      service: toCores(after.service - before.service),
      bench: toCores(after.bench - before.bench),
      machineBusy: busyMs / machineTotal,
      idle: idle / machineTotal,
      iowait: iowait / machineTotal,
      others: Math.max(0, toCores(busyMs) - result.cpuMs / wall - toCores(after.cluster - before.cluster)
        - toCores(after.service - before.service) - toCores(after.bench - before.bench)),
      cores,
    },
  };
  const ms = (v: number) => (Number.isNaN(v) ? '-' : `${v.toFixed(0)} ms`);
  console.log(`write-ceiling: ${label}: ${result.commits} commits in ${(result.elapsedMs / 1000).toFixed(1)} s = ${figures.tps.toFixed(0)} tps `
    + `(per writer ${result.perWriterMin}-${result.perWriterMax}; commit round trip p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms; ${result.errors} errors${result.firstError ? `: ${result.firstError}` : ''}); `
    + `notify lock: ${locks.samples} samples, ${locks.samplesWaiting} with waiters, ${locks.waitingTotal} waiting sessions in all, max ${locks.maxAtOnce} at once; `
    + `subscriber: ${figures.updates} updates, ${latencies.length} commits matched of ${figures.watchedCommits} (${unmatched} not seen), commit → update p50 ${ms(percentile(latencies, 50))} p99 ${ms(percentile(latencies, 99))} max ${ms(latencies.length ? Math.max(...latencies) : NaN)}; `
    + `webhooks: ${figures.enqueued} queued, ${deliveries} delivered (${figures.deliveriesPerSecond.toFixed(0)}/s), ${figures.backlog} pending at the end; `
    + `CPU (cores): writers ${figures.cpu.writers.toFixed(2)}, PostgreSQL ${figures.cpu.cluster.toFixed(2)}, service ${figures.cpu.service.toFixed(2)}, bench ${figures.cpu.bench.toFixed(2)}, `
    + `other processes ${figures.cpu.others.toFixed(2)}; machine idle ${(figures.cpu.idle * 100).toFixed(0)} % + iowait ${(figures.cpu.iowait * 100).toFixed(0)} % of ${cores} cores; load average ${os.loadavg()[0].toFixed(1)}`);
  return figures;
}

// ---------------------------------------------------------------------------------------------------------------

async function createEndpoint(baseUrl: string, token: string, organizationId: string, url: string): Promise<void> {
  const res = await fetch(`${baseUrl}/api/svc/v1/webhooks`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ organization_id: organizationId, url, event_types: ['contractor.answered'], description: 'write-ceiling bench' }),
  });
  if (res.status !== 201) throw new Error(`write-ceiling: creating an endpoint answered ${res.status}: ${await res.text()}`);
}

/** Writers' documents: writer i owns the projects of rank i modulo the writers; one document of each project in turn. */
async function plan(admin: Client): Promise<{ documents: string[][]; watchedProjects: string[]; watched: string[] }> {
  const projects = (await admin.query<{ id: string }>(BENCH_PROJECT_IDS_SQL)).rows.map((r) => r.id);
  if (projects.length < WRITERS) throw new Error(`write-ceiling: ${projects.length} projects for ${WRITERS} writers`);
  const { rows } = await admin.query<{ id: string; project_id: string }>(`select d.id, t.project_id from document d
    join template t on t.id = d.template_id where t.project_id = any($1::uuid[]) order by t.project_id, d.legacy_id`, [projects]);
  const byProject = new Map<string, string[]>();
  for (const r of rows) byProject.set(r.project_id, [...(byProject.get(r.project_id) ?? []), r.id]);
  const owned = Array.from({ length: WRITERS }, (_, i) => projects.filter((_, j) => j % WRITERS === i));
  const documents = owned.map((mine) => {
    const lists = mine.map((p) => byProject.get(p) ?? []);
    const longest = Math.max(...lists.map((l) => l.length));
    const order: string[] = [];
    for (let k = 0; k < longest; k++) for (const l of lists) if (k < l.length) order.push(l[k]);
    return order;
  });
  const watchedProjects = owned.slice(0, WATCHED).map((mine) => mine[0]);
  const watched = watchedProjects.flatMap((p) => byProject.get(p) ?? []);
  return { documents, watchedProjects, watched };
}

function report(runs: RunFigures[], triggers: { capture: Trigger[]; outbox: Trigger[] }): void {
  const modes = MODES.filter((m) => runs.some((r) => r.mode === m));
  const of = (m: Mode) => runs.filter((r) => r.mode === m);
  const med = (m: Mode, f: (r: RunFigures) => number) => median(of(m).map(f));
  const all = (m: Mode, f: (r: RunFigures) => number, digits = 0) => of(m).map((r) => f(r).toFixed(digits)).join(' / ');
  const tps = Object.fromEntries(modes.map((m) => [m, med(m, (r) => r.tps)])) as Record<Mode, number>;
  const fmt = (v: number, digits = 0) => (Number.isNaN(v) ? '-' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

  console.log(`\nwrite-ceiling: modes (${ROUNDS} rounds of ${SECONDS} s each, mirrored order):`);
  for (const m of modes) console.log(`  ${m}: ${MODE_MEANS[m]}`);
  console.log(`  change capture triggers (disabled in off and bare): ${triggers.capture.map((t) => `${t.table}.${t.name}`).join(', ') || 'none found'}`);
  console.log(`  webhook outbox triggers (disabled in bare): ${triggers.outbox.map((t) => `${t.table}.${t.name}`).join(', ') || 'none found'}`);

  const rows: Array<[string, (m: Mode) => string]> = [
    ['commits/s, median (each run)', (m) => `**${fmt(tps[m])}** (${all(m, (r) => r.tps)})`],
    ['vs capture off', (m) => (tps.off ? `${(tps[m] / tps.off).toFixed(2)}x` : '-')],
    ['vs bare (neither capture nor outbox)', (m) => (tps.bare ? `${(tps[m] / tps.bare).toFixed(2)}x` : '-')],
    ['commit round trip p50 / p99 (median of runs)', (m) => `${fmt(med(m, (r) => r.writers.p50Ms), 1)} / ${fmt(med(m, (r) => r.writers.p99Ms), 1)} ms`],
    ['notify lock: samples with waiters / with a holder / samples', (m) => `${of(m).map((r) => `${r.locks.samplesWaiting} / ${r.locks.heldTotal} / ${r.locks.samples}`).join('; ')}`],
    ['notify lock: waiting sessions summed over samples; max at once', (m) => `${of(m).map((r) => `${r.locks.waitingTotal}; ${r.locks.maxAtOnce}`).join(' / ')}`],
    ['notify lock: mean waiting per sample', (m) => fmt(med(m, (r) => r.locks.waitingTotal / Math.max(1, r.locks.samples)), 1)],
    ['commit → subscriber p50 / p99 / max (all runs pooled)', (m) => {
      const l = of(m).flatMap((r) => r.latencies);
      return l.length ? `${fmt(percentile(l, 50))} / ${fmt(percentile(l, 99))} / ${fmt(Math.max(...l))} ms (n = ${l.length})` : '-';
    }],
    ['watched commits never named by an update', (m) => of(m).map((r) => `${r.unmatched} of ${r.watchedCommits}`).join(' / ')],
    ['webhooks delivered per s during the run, median', (m) => `${fmt(med(m, (r) => r.deliveriesPerSecond))} (${all(m, (r) => r.deliveriesPerSecond)})`],
    ['webhooks queued; pending when the writers stopped', (m) => of(m).map((r) => `${r.enqueued}; ${r.backlog}`).join(' / ')],
    ['CPU, cores: writers process', (m) => all(m, (r) => r.cpu.writers, 2)],
    ['CPU, cores: PostgreSQL (all its processes)', (m) => all(m, (r) => r.cpu.cluster, 2)],
    ['CPU, cores: service', (m) => all(m, (r) => r.cpu.service, 2)],
    ['CPU, cores: bench process (receiver, subscriber, sampler)', (m) => all(m, (r) => r.cpu.bench, 2)],
    ['CPU, cores: other processes of the machine', (m) => all(m, (r) => r.cpu.others, 2)],
    [`machine idle + iowait, % of ${os.cpus().length} cores`, (m) => of(m).map((r) => `${(r.cpu.idle * 100).toFixed(0)} + ${(r.cpu.iowait * 100).toFixed(0)}`).join(' / ')],
    ['writers CPU-bound? (their process >= 0.8 core)', (m) => of(m).map((r) => (r.cpu.writers >= 0.8 ? 'yes' : 'no')).join(' / ')],
    ['machine saturated? (< 5 % idle)', (m) => of(m).map((r) => (r.cpu.idle + r.cpu.iowait < 0.05 ? 'yes' : 'no')).join(' / ')],
  ];
  console.log(`\n| ${WRITERS} writers, 1 ANSWERED version per transaction | ${modes.map((m) => `capture ${m}`).join(' | ')} |`);
  console.log(`|---|${modes.map(() => '---').join('|')}|`);
  for (const [name, cell] of rows) console.log(`| ${name} | ${modes.map(cell).join(' | ')} |`);
  if (tps.on && tps.off) console.log(`\nwrite-ceiling: capture on / off = ${(tps.on / tps.off).toFixed(2)}x (target >= 0.8x)`);
  const offWaits = of('off').reduce((n, r) => n + r.locks.waitingTotal, 0);
  if (offWaits) {
    console.log(`write-ceiling: capture off still waited on the notification queue's lock (${offWaits} waiting sessions sampled): a trigger left `
      + 'enabled (the webhook outbox) still NOTIFYs, so on / off compares two serialized modes; bare has no such trigger');
  }
  const onWaits = of('on').reduce((n, r) => n + r.locks.waitingTotal, 0);
  console.log(`write-ceiling: sessions seen waiting on the notification queue's lock with capture on: ${onWaits} (target 0)`);
}

export async function run(): Promise<void> {
  const started = performance.now();
  const port = await freePort();
  // Durable as production (bench/bench-cluster.ts), and 20 replication slots and WAL senders.
  const cluster = startCluster(port, {
    root: path.resolve('.data/bench-ceiling'), pgBin: PG_BIN, bench: 'write-ceiling', pgBinVariable: 'BENCH_CEILING_PG_BIN', source: 'bench/write-ceiling.bench.ts',
    settings: ['max_replication_slots = 20', 'max_wal_senders = 20', 'shared_buffers = 256MB', 'max_connections = 100'],
  });
  console.log(`write-ceiling: own cluster on 127.0.0.1:${port} (${PG_BIN}), data in ${cluster.dataDir}`);
  const database = 'ceiling';
  let server: ServerProcess | null = null;
  let writers: Writers | null = null;
  let receiver: Receiver | null = null;
  let subscriber: Subscriber | null = null;
  const admin = new Client({ connectionString: withDatabase(cluster.serverUrl, database), application_name: 'write-ceiling admin' });
  const sampling = new Client({ connectionString: withDatabase(cluster.serverUrl, database), application_name: 'write-ceiling lock sampler' });
  let triggers: { capture: Trigger[]; outbox: Trigger[] } | null = null;
  try {
    await adminQuery(cluster.serverUrl, `create database "${database}"`);
    const url = withDatabase(cluster.serverUrl, database);
    const orm = await MikroORM.init(ormConfig(url, { pool: { min: 0, max: 2 } }));
    try {
      await orm.getMigrator().up();
      await loadDemoData(orm.em.fork());
      const execute = <T>(sql: string) => orm.em.fork().getConnection().execute(sql) as Promise<T>;
      const counts = await buildDataset(execute, { projects: PROJECTS });
      console.log(`write-ceiling: data set of ${counts.projects} projects, ${counts.templates} templates and slices, ${counts.documents} documents, `
        + `${counts.versions} versions, ready ${((performance.now() - started) / 1000).toFixed(1)} s after the start`);
    } finally {
      await orm.close(true);
    }
    await admin.connect();
    await sampling.connect();
    const settings = (await admin.query<{ name: string; setting: string }>(`select name, setting from pg_settings
      where name in ('wal_level', 'fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_replication_slots', 'max_wal_senders', 'server_version')`)).rows;
    console.log(`write-ceiling: ${settings.map((s) => `${s.name}=${s.setting}`).join(', ')}`);
    triggers = await captureTriggers(admin);

    receiver = await new Receiver().start();
    server = await ServerProcess.start(url, {
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      DATABASE_DIRECT_URL: url,
      WEBHOOK_MAX_ATTEMPTS_PER_SECOND: '100000',
      WEBHOOK_HTTPS_ONLY: 'false',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      ...JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}') as Record<string, string>,
    });
    const token = await demoToken(server.url);
    const organizations = { 'atelier-demo': DEMO_IDS.organizations.atelierDemo, 'atelier-nord': DEMO_IDS.organizations.atelierNord };
    for (const [name, id] of Object.entries(organizations)) await createEndpoint(server.url, token, id, `${receiver.url}/hook/${name}`);

    const { documents, watchedProjects, watched } = await plan(admin);
    subscriber = new Subscriber('write-ceiling', 'subscription WriteCeiling($ids: [ID!]) { projectChanged(projectIds: $ids) { projectId documentIds } }');
    await subscriber.start(server.url, token, watchedProjects);
    console.log(`write-ceiling: ${WRITERS} writers over ${documents.reduce((n, d) => n + d.length, 0)} documents (${Math.min(...documents.map((d) => d.length))}-${Math.max(...documents.map((d) => d.length))} each); `
      + `webhook endpoints of Atelier Demo and Atelier Nord for contractor.answered; subscriber on ${watchedProjects.length} projects (${watched.length} documents)`);

    writers = Writers.start('write-ceiling');
    const ctx: Context = {
      admin, cluster, server, writers, receiver, subscriber, sampler: new LockSampler(sampling), triggers,
      job: { url, documents, watched },
    };
    if (WARMUP_SECONDS > 0) {
      const warm = await runOnce(ctx, 'on', 'warm-up (on)', WARMUP_SECONDS);
      if (!warm.updates) console.log('write-ceiling: WARNING: the subscriber got no update during the warm-up');
      if (!warm.deliveries) console.log('write-ceiling: WARNING: no webhook delivery during the warm-up');
      await admin.query('analyze webhook_endpoint, webhook_event, webhook_delivery, webhook_attempt');
    }
    const runs: RunFigures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? MODES : [...MODES].reverse();
      for (const mode of order) runs.push(await runOnce(ctx, mode, `round ${round + 1}, capture ${mode}`, SECONDS));
    }
    await setMode(admin, triggers, 'restore');
    if (subscriber.errors.length) console.log(`write-ceiling: subscriber errors: ${subscriber.errors.slice(0, 5).join('; ')}`);
    console.log(`write-ceiling: webhook receiver: ${receiver.arrivals.length} deliveries, ${receiver.duplicates} duplicates`);
    report(runs, triggers);
    console.log(`\nwrite-ceiling: done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    if (triggers) await setMode(admin, triggers, 'restore').catch(() => undefined);
    writers?.exit();
    await subscriber?.stop().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await receiver?.close().catch(() => undefined);
    await admin.end().catch(() => undefined);
    await sampling.end().catch(() => undefined);
    cluster.stop();
  }
}
