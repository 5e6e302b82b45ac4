import os from 'node:os';
import { median, percentile } from './commit-latency';
import type { CaptureMode } from './fanout-fleet';
import type { SenderFigures } from './fanout-senders';

// The figures of one configuration's run (bench/fanout.bench.ts), its one-line summary, and the markdown table of all.

export interface Configuration {
  mode: CaptureMode;
  instances: number;
}

export const configurationName = (c: Configuration) => `${c.mode} x ${c.instances}`;

interface SubscriberFigures {
  /** Commits of watched documents during the run, and those an update named (every one up to its arrival). */
  watched: number;
  delivered: number;
  updates: number;
  /** Of those not delivered, named before their COMMIT returned to the writer (bench/commit-latency.ts, namedBeforeReturn). */
  early: number;
}

export interface RunFigures {
  config: Configuration;
  round: number;
  /** From the first instance's start to every one hearing, s. */
  startSeconds: number;
  /** /healthz's decoder statuses, counted (`1 streaming, 15 standby`). */
  decoders: string;
  commits: number;
  /** Commits per second achieved. */
  rate: number;
  errors: number;
  firstError: string | null;
  roundTripP50: number;
  roundTripP99: number;
  /** Commit to subscriber, ms, every subscriber of every instance. */
  latencies: number[];
  subscribers: SubscriberFigures[];
  /** change_delay_seconds over the run, every instance: commit to heard (before coalescing). */
  heard: { count: number; meanMs: number; p99AtMostMs: number | null };
  senders: SenderFigures;
  /** Cores over the window (CPU seconds / wall seconds); idle and iowait: fractions of the machine. */
  cpu: { seconds: number; senders: number; cluster: number; instances: number; writers: number; bench: number; others: number; idle: number; iowait: number };
  /** The bus's Redis over the window, as its INFO counts (the whole server). */
  redis: { xreadPerSecond: number; scriptsPerSecond: number; callsPerSecond: number; cores: number };
  /** Updates whose kinds say something was lost or interrupted (RESYNC, INTERRUPTED, RESUMED), all subscribers. */
  unusualUpdates: number;
  gaps: number;
  heartbeatsMissed: number;
  subscriberErrors: string[];
  /** WARN and worse log lines of the instances. */
  logProblems: string[];
}

const fmt = (v: number, digits = 0) => (Number.isNaN(v) ? '-' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const ms = (v: number) => (Number.isNaN(v) ? '-' : `${fmt(v)} ms`);

const missed = (r: RunFigures) => r.subscribers.reduce((n, s) => n + s.watched - s.delivered, 0);

export function summary(r: RunFigures): string {
  const l = r.latencies;
  return `fanout: ${configurationName(r.config)}, round ${r.round}: started and hearing in ${r.startSeconds.toFixed(1)} s (decoders: ${r.decoders}); `
    + `${r.commits} commits at ${r.rate.toFixed(0)}/s (round trip p50 ${r.roundTripP50.toFixed(1)} ms, p99 ${r.roundTripP99.toFixed(1)} ms; ${r.errors} errors${r.firstError ? `: ${r.firstError}` : ''}); `
    + `commit → subscriber p50 ${ms(percentile(l, 50))} p99 ${ms(percentile(l, 99))} max ${ms(l.length ? Math.max(...l) : NaN)} (n = ${l.length}, ${missed(r)} not delivered, ${r.subscribers.reduce((n, s) => n + s.early, 0)} of them named before their COMMIT returned); `
    + `commit → heard mean ${ms(r.heard.meanMs)}; WAL senders ${r.cpu.senders.toFixed(3)} core (${r.senders.names}; ${r.senders.started} started, ${r.senders.ended} ended in the window); `
    + `CPU (cores): PostgreSQL ${r.cpu.cluster.toFixed(2)}, instances ${r.cpu.instances.toFixed(2)}, writers ${r.cpu.writers.toFixed(2)}, bench ${r.cpu.bench.toFixed(2)}, others ${r.cpu.others.toFixed(2)} (Redis ${r.redis.cores.toFixed(2)}: ${r.redis.xreadPerSecond.toFixed(0)} XREAD/s); `
    + `machine idle ${(r.cpu.idle * 100).toFixed(0)} % + iowait ${(r.cpu.iowait * 100).toFixed(0)} %; `
    + `${r.unusualUpdates} RESYNC/INTERRUPTED/RESUMED updates, ${r.gaps} gaps, ${r.heartbeatsMissed} heartbeats missed, ${r.logProblems.length} WARN+ log lines, ${r.subscriberErrors.length} subscriber errors`;
}

export interface ReportSettings {
  seconds: number;
  rounds: number;
  writers: number;
  rate: number;
  watched: number;
  projects: number;
}

export function report(runs: RunFigures[], configs: Configuration[], settings: ReportSettings): void {
  const of = (c: Configuration) => runs.filter((r) => r.config.mode === c.mode && r.config.instances === c.instances);
  const med = (c: Configuration, f: (r: RunFigures) => number) => median(of(c).map(f));
  /** The median, and each round's figure in brackets when there are several. */
  const cell = (c: Configuration, f: (r: RunFigures) => number, digits = 0, unit = '') => {
    const each = of(c).map(f);
    return `${fmt(median(each), digits)}${unit}${each.length > 1 ? ` (${each.map((v) => fmt(v, digits)).join(' / ')})` : ''}`;
  };
  const sum = (c: Configuration, f: (r: RunFigures) => number) => of(c).reduce((n, r) => n + f(r), 0);
  const latency = (c: Configuration, p: number | 'max') => (r: RunFigures) => (p === 'max' ? (r.latencies.length ? Math.max(...r.latencies) : NaN) : percentile(r.latencies, p));

  const rows: Array<[string, (c: Configuration) => string]> = [
    ['decoders (/healthz), at the end of each run', (c) => of(c).map((r) => r.decoders).join(' / ')],
    ['commits/s achieved', (c) => cell(c, (r) => r.rate)],
    ['commit round trip p50 / p99', (c) => `${fmt(med(c, (r) => r.roundTripP50), 1)} / ${fmt(med(c, (r) => r.roundTripP99), 1)} ms`],
    ['**commit → subscriber p50 / p99 / max**', (c) => `**${fmt(med(c, latency(c, 50)))} / ${fmt(med(c, latency(c, 99)))} / ${fmt(med(c, latency(c, 'max')))} ms** (n = ${fmt(sum(c, (r) => r.latencies.length))})`],
    ['watched commits delivered per subscriber (min-max of committed); not delivered in all (of them named before their COMMIT returned)', (c) => of(c).map((r) => {
      const delivered = r.subscribers.map((s) => s.delivered);
      const watched = r.subscribers[0]?.watched ?? 0;
      return `${Math.min(...delivered)}-${Math.max(...delivered)} of ${watched}; ${missed(r)} (${r.subscribers.reduce((n, s) => n + s.early, 0)})`;
    }).join(' / ')],
    ['commit → heard (change_delay_seconds) mean; p99 at most', (c) => `${fmt(med(c, (r) => r.heard.meanMs))} ms; ${of(c).map((r) => (r.heard.p99AtMostMs === null ? '-' : `${fmt(r.heard.p99AtMostMs)} ms`)).join(' / ')}`],
    ['**CPU, cores: WAL senders**', (c) => `**${cell(c, (r) => r.cpu.senders, 3)}**`],
    ['WAL senders, CPU ms per 1,000 commits', (c) => cell(c, (r) => (r.cpu.senders * r.cpu.seconds * 1e6) / r.commits)],
    ['WAL senders seen; started / ended in the window', (c) => of(c).map((r) => `${r.senders.seen}; ${r.senders.started} / ${r.senders.ended}`).join(' / ')],
    ['CPU, cores: PostgreSQL (all its processes)', (c) => cell(c, (r) => r.cpu.cluster, 2)],
    ['CPU, cores: service instances (all)', (c) => cell(c, (r) => r.cpu.instances, 2)],
    ['CPU, cores: writers / bench / other processes', (c) => `${fmt(med(c, (r) => r.cpu.writers), 2)} / ${fmt(med(c, (r) => r.cpu.bench), 2)} / ${fmt(med(c, (r) => r.cpu.others), 2)}`],
    ['Redis (the whole server): XREAD / scripts / all commands (scripts\' own included) per s; its CPU, cores', (c) => `${fmt(med(c, (r) => r.redis.xreadPerSecond))} / ${fmt(med(c, (r) => r.redis.scriptsPerSecond))} / ${fmt(med(c, (r) => r.redis.callsPerSecond))}; ${fmt(med(c, (r) => r.redis.cores), 2)}`],
    [`machine idle + iowait, % of ${os.cpus().length} cores`, (c) => of(c).map((r) => `${(r.cpu.idle * 100).toFixed(0)} + ${(r.cpu.iowait * 100).toFixed(0)}`).join(' / ')],
    ['RESYNC / INTERRUPTED / RESUMED updates; gaps; heartbeats missed', (c) => `${sum(c, (r) => r.unusualUpdates)}; ${sum(c, (r) => r.gaps)}; ${sum(c, (r) => r.heartbeatsMissed)}`],
    ['WARN+ log lines; subscriber errors; write errors', (c) => `${sum(c, (r) => r.logProblems.length)}; ${sum(c, (r) => r.subscriberErrors.length)}; ${sum(c, (r) => r.errors)}`],
  ];
  console.log(`\nfanout: ${settings.writers} writers at ${settings.rate} commits/s in all (1 ANSWERED version per transaction, over ${settings.projects} projects), `
    + `${settings.seconds} s per run, ${settings.rounds} round(s), medians; one subscriber per instance on ${settings.watched} projects; `
    + 'bus: CHANGE_BUS_URL (one elected decoder); own: none (each instance decodes for itself)\n');
  console.log(`| instances | ${configs.map(configurationName).join(' | ')} |`);
  console.log(`|---|${configs.map(() => '---').join('|')}|`);
  for (const [name, f] of rows) console.log(`| ${name} | ${configs.map(f).join(' | ')} |`);

  const figure = (mode: CaptureMode, n: number, f: (r: RunFigures) => number) => {
    const c = configs.find((x) => x.mode === mode && x.instances === n);
    return c ? med(c, f) : NaN;
  };
  const senders = (mode: CaptureMode, n: number) => figure(mode, n, (r) => r.cpu.senders);
  const idle = (mode: CaptureMode, n: number) => `${(figure(mode, n, (r) => r.cpu.idle) * 100).toFixed(0)} %`;
  console.log('');
  const [bus2, bus16, own2, own16] = [senders('bus', 2), senders('bus', 16), senders('own', 2), senders('own', 16)];
  if (!Number.isNaN(bus2 + bus16)) {
    // A WAL sender starved of CPU reads more WAL per wake-up, and costs less per commit: the machine's idle time says
    // whether the two runs compare.
    const change = (bus16 - bus2) / bus2;
    console.log(`fanout: WAL senders with the bus, 16 instances against 2: ${bus16.toFixed(3)} / ${bus2.toFixed(3)} core, ${Math.abs(change * 100).toFixed(0)} % `
      + `${change < 0 ? 'less' : 'more'} (target within 20 %; machine idle ${idle('bus', 16)} / ${idle('bus', 2)})`);
  }
  if (!Number.isNaN(own2 + own16)) console.log(`fanout: WAL senders, each instance decoding, 16 instances against 2: ${own16.toFixed(3)} / ${own2.toFixed(3)} core = ${(own16 / own2).toFixed(1)}x`);
  if (!Number.isNaN(own16 + bus16)) console.log(`fanout: WAL senders at 16 instances, own decoding against the bus: ${(own16 / bus16).toFixed(1)}x`);
  const bus16Config = configs.find((c) => c.mode === 'bus' && c.instances === 16);
  if (bus16Config) console.log(`fanout: commit → subscriber p99 with the bus at 16 instances: ${ms(med(bus16Config, latency(bus16Config, 99)))} (target ≤ 1,000 ms)`);
  for (const r of runs) {
    const lines = [...r.logProblems.map((l) => `log: ${l.slice(0, 300)}`), ...r.subscriberErrors.map((e) => `subscriber: ${e.slice(0, 300)}`)];
    if (lines.length) console.log(`fanout: ${configurationName(r.config)}, round ${r.round}: ${lines.length} problem(s), the first: ${lines.slice(0, 5).join(' || ')}`);
  }
}
