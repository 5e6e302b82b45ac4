import type http from 'node:http';
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import { performance } from 'node:perf_hooks';
import type { RecordedStatement } from './server-process';

/**
 * The probe a benchmark drives over IPC (bench/server-process.ts), answered alike by every server process it measures:
 * the service (bench/dashboard-server.ts) and its same-SQL floor (bench/dashboard-floor-server.ts). Between `begin`
 * and `end` it counts SQL statements, CPU time, heap bytes allocated, collections and the peak resident set.
 *
 * Bytes allocated: V8's GC profiler gives the used heap before and after every collection of the window, so
 * allocated = (used at end - used at start) + sum over collections of (used before - used after): what was
 * freed was allocated before, and what is still there too. It counts the JavaScript heap (buffers outside it,
 * such as socket chunks, are not in it); a collection of the window that frees bytes allocated before it makes
 * the figure a little high, by at most one young generation (a few MiB over the whole window).
 *
 * `record` starts recording the SQL statements the server sends (text, bindings, the connection and transaction they
 * went on, when each was sent and answered, its rows), `recorded` stops and answers them: the dashboard benchmark
 * hands the statements of one request of the service to its floor, and compares the floor's with them.
 *
 * `rss` answers the resident set now, its highest value sampled every 10 ms since the first `rss` (or the last
 * with `reset`), the kernel's high-water mark, and the heap: the abuse benchmark follows the memory a hostile
 * caller makes the server keep.
 *
 * `profile-start` starts V8's CPU profiler (node:inspector), `profile-stop` stops it and answers where the sampled
 * time went: in total (idle left out), and for a few packages (`PROFILED_PACKAGES`) their own time (samples whose
 * running function is one of the package's) and the time under them (samples with a frame of the package anywhere on
 * the stack: what the package spends calling others too).
 */

/** Packages whose share of a CPU profile `profile-stop` answers, by the path of their frames. */
const PROFILED_PACKAGES: Record<string, string> = {
  mikroOrm: '/node_modules/@mikro-orm/',
  knex: '/node_modules/knex/',
  pg: '/node_modules/pg',
  graphql: '/node_modules/graphql',
};

export interface CpuProfileSummary {
  /** Sampled time, idle left out. */
  totalMs: number;
  /** Sampled time of each of PROFILED_PACKAGES's own functions. */
  selfMs: Record<string, number>;
  /** Sampled time under each of PROFILED_PACKAGES's functions (theirs and what they call). */
  packagesMs: Record<string, number>;
}

interface ProfileNode { id: number; callFrame: { url: string; functionName: string }; children?: number[] }

/** Where a CPU profile's sampled time went (see `profile-stop`). */
function summarize(profile: { nodes: ProfileNode[]; samples?: number[]; timeDeltas?: number[] }): CpuProfileSummary {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const names = Object.keys(PROFILED_PACKAGES);
  // The packages on each node's stack, memoized from the root down.
  const under = new Map<number, Set<string>>();
  const packagesOf = (id: number): Set<string> => {
    let found = under.get(id);
    if (found) return found;
    const up = parent.get(id);
    found = new Set(up === undefined ? [] : packagesOf(up));
    const url = byId.get(id)!.callFrame.url;
    for (const name of names) if (url.includes(PROFILED_PACKAGES[name])) found.add(name);
    under.set(id, found);
    return found;
  };
  const packagesMs: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const selfMs: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  let totalMs = 0;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    if (byId.get(samples[i])?.callFrame.functionName === '(idle)') continue;
    const ms = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
    totalMs += ms;
    for (const name of packagesOf(samples[i])) packagesMs[name] += ms;
    const url = byId.get(samples[i])!.callFrame.url;
    for (const name of names) if (url.includes(PROFILED_PACKAGES[name])) selfMs[name] += ms;
  }
  return { totalMs, selfMs, packagesMs };
}

interface Window {
  statements: number;
  cpu: NodeJS.CpuUsage;
  usedHeap: number;
  profiler: v8.GCProfiler;
  peakRss: number;
  sampler: NodeJS.Timeout;
}

/** The statements of a server between `record` and `recorded`, with their times from `record`. */
export class StatementRecorder {
  private startedAt = 0;
  private statements: RecordedStatement[] | null = null;

  /** Whether a recording is under way (a server records nothing, and allocates nothing for it, otherwise). */
  get on(): boolean {
    return this.statements !== null;
  }

  start(): void {
    this.startedAt = performance.now();
    this.statements = [];
  }

  stop(): RecordedStatement[] {
    const recorded = this.statements ?? [];
    this.statements = null;
    return recorded;
  }

  /** A statement sent; null when not recording. `answered` completes it. */
  sent(role: string, connection: string, transaction: string | null, sql: string, bindings: unknown[]): RecordedStatement | null {
    if (!this.statements) return null;
    const s: RecordedStatement = { role, connection, transaction, sql, bindings, sentMs: performance.now() - this.startedAt, answeredMs: null, rows: null };
    this.statements.push(s);
    return s;
  }

  answered(s: RecordedStatement | null | undefined, rows: number | null): void {
    if (!s) return;
    s.answeredMs = performance.now() - this.startedAt;
    s.rows = rows;
  }
}

export interface ProbedServer {
  /** The HTTP server whose requests are counted in flight (`idle`). */
  server: http.Server;
  /** SQL statements sent so far by the process. */
  statements(): number;
  recorder: StatementRecorder;
  /** Closes the server and what it holds; the process exits afterwards. */
  stop(): Promise<void>;
}

/** Answers the probe's IPC commands for `target`. */
export function answerProbes(target: ProbedServer): void {
  let window: Window | null = null;
  // Requests still being answered: a load run's clients stop sending, not the server answering what it got.
  let inFlight = 0;
  let whenIdle: Array<() => void> = [];
  target.server.on('request', (_req, res: http.ServerResponse) => {
    inFlight++;
    res.on('close', () => {
      if (--inFlight > 0) return;
      for (const resolve of whenIdle) resolve();
      whenIdle = [];
    });
  });

  // The resident set's peak, sampled from the first `rss` command on (no timer before: other benchmarks pay nothing).
  let peakRss = 0;
  let rssSampler: NodeJS.Timeout | null = null;

  let session: Session | null = null;
  const post = (method: string, params: Record<string, unknown> = {}) => new Promise<unknown>((resolve, reject) => {
    session!.post(method, params, (err, result) => (err ? reject(err) : resolve(result)));
  });

  process.on('message', (message: { cmd: string; reset?: boolean }) => {
    if (message.cmd === 'profile-start') {
      session ??= new Session();
      session.connect();
      void post('Profiler.enable')
        .then(() => post('Profiler.setSamplingInterval', { interval: 100 }))
        .then(() => post('Profiler.start'))
        .then(() => process.send!({ cmd: 'profiling' }));
    } else if (message.cmd === 'profile-stop' && session) {
      void post('Profiler.stop').then((result) => {
        const { profile } = result as { profile: Parameters<typeof summarize>[0] };
        const summary = summarize(profile);
        // The whole profile, for Chrome's DevTools or a closer look (BENCH_PROFILE_FILE, in the server's environment).
        if (process.env.BENCH_PROFILE_FILE) writeFileSync(process.env.BENCH_PROFILE_FILE, JSON.stringify(profile));
        session!.disconnect();
        process.send!({ cmd: 'profiled', ...summary });
      });
    } else if (message.cmd === 'rss') {
      const now = process.memoryUsage();
      if (!rssSampler || message.reset) peakRss = now.rss;
      rssSampler ??= setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()); }, 10).unref();
      peakRss = Math.max(peakRss, now.rss);
      process.send!({
        cmd: 'rss', rss: now.rss, peakRss, maxRss: process.resourceUsage().maxRSS * 1024,
        heapUsed: now.heapUsed, heapTotal: now.heapTotal, external: now.external,
      });
    } else if (message.cmd === 'begin') {
      if (window) clearInterval(window.sampler);
      const profiler = new v8.GCProfiler();
      const w: Window = {
        statements: target.statements(), cpu: process.cpuUsage(), usedHeap: v8.getHeapStatistics().used_heap_size, profiler,
        peakRss: process.memoryUsage.rss(),
        sampler: setInterval(() => { w.peakRss = Math.max(w.peakRss, process.memoryUsage.rss()); }, 10),
      };
      profiler.start();
      window = w;
      process.send!({ cmd: 'begun' });
    } else if (message.cmd === 'end' && window) {
      const w = window;
      window = null;
      clearInterval(w.sampler);
      const gcs = w.profiler.stop()?.statistics ?? [];
      const freed = gcs.reduce((sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize, 0);
      const cpu = process.cpuUsage(w.cpu);
      process.send!({
        cmd: 'ended',
        statements: target.statements() - w.statements,
        cpuMs: (cpu.user + cpu.system) / 1000,
        allocatedBytes: v8.getHeapStatistics().used_heap_size - w.usedHeap + freed,
        gcs: gcs.length,
        gcMs: gcs.reduce((sum, gc) => sum + gc.cost, 0) / 1000,
        peakRss: Math.max(w.peakRss, process.memoryUsage.rss()),
        maxRss: process.resourceUsage().maxRSS * 1024,
      });
    } else if (message.cmd === 'record') {
      target.recorder.start();
      process.send!({ cmd: 'recording' });
    } else if (message.cmd === 'recorded') {
      process.send!({ cmd: 'recorded', statements: target.recorder.stop() });
    } else if (message.cmd === 'idle') {
      if (inFlight === 0) process.send!({ cmd: 'idle' });
      else whenIdle.push(() => process.send!({ cmd: 'idle' }));
    } else if (message.cmd === 'stop') {
      void target.stop().then(() => process.exit(0));
    }
  });
}
