import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Where a service instance's CPU went (bench/webhooks-throughput.ts, BENCH_WEBHOOKS_PROFILE=1): the .cpuprofile files
// Node writes at exit under `--cpu-prof`, cut to the measured window. V8 stamps samples with the monotonic clock in µs,
// the one process.hrtime reads, so the bench's window bounds compare with them (`monotonicUs`).

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Now on the clock of V8's profiles (CLOCK_MONOTONIC), µs. */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** The areas a sample's own function falls in, by its script's URL (the first that matches). */
const AREAS: Array<[string, (url: string) => boolean]> = [
  ['pg client (pg, pg-protocol, pg-pool, pg-types): the statements\' wire work', (u) => /\/node_modules\/pg(-protocol|-pool|-types)?\//.test(u)],
  ['change capture (src/platform/events, pg-logical-replication): decoding the outbox\'s messages', (u) => u.includes('/src/platform/events/') || u.includes('/pg-logical-replication/')],
  ['signature (standardwebhooks, fast-sha256, @stablelib, node:crypto)', (u) => /\/node_modules\/(standardwebhooks|fast-sha256|@stablelib)\//.test(u) || /^node:(crypto|internal\/crypto)/.test(u)],
  ['HTTP client and sockets (node:http, net, streams, dns)', (u) => /^node:(_http|http|https|net|tls|dns|stream|_stream|internal\/(http|streams|stream_base|net|dns|url|js_stream|dgram))/.test(u)],
  ['delivery loop\'s own code (src/modules/webhooks)', (u) => u.includes('/src/modules/webhooks/')],
  ['pace (rate-limiter-flexible)', (u) => u.includes('/rate-limiter-flexible/')],
  ['tracing (@opentelemetry)', (u) => u.includes('/@opentelemetry/')],
  ['logging (pino)', (u) => u.includes('/node_modules/pino')],
  ['event loop: timers, microtasks, async hooks', (u) => /^node:(timers|internal\/(timers|process\/task_queues|async_hooks|process\/promises))/.test(u)],
  ['other Node internals', (u) => u.startsWith('node:')],
  ['other packages', (u) => u.includes('/node_modules/')],
  ['other service code', () => true],
];

const SPECIAL = new Map([
  ['(garbage collector)', 'garbage collection'],
  ['(program)', 'V8 and native work outside JavaScript ((program))'],
]);

export interface ProfileSummary {
  files: number;
  /** Whether samples were cut to the window (false: the window fell outside the profiles, all of them counted). */
  windowed: boolean;
  busyMs: number;
  idleMs: number;
  /** [area, self ms], most first. */
  areas: Array<[string, number]>;
  /** [function at file:line, self ms], the most. */
  functions: Array<[string, number]>;
  /** [function of src/modules/webhooks, ms with what it calls synchronously], the most. */
  webhooks: Array<[string, number]>;
}

const shortUrl = (url: string) => url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, '');

function add(map: Map<string, number>, key: string, ms: number): void {
  map.set(key, (map.get(key) ?? 0) + ms);
}

/** The profiles of `dir` (every process's), summed, their samples between `fromUs` and `toUs`. */
export function summarizeProfiles(dir: string, fromUs: number, toUs: number, top = 15): ProfileSummary | null {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.cpuprofile'));
  } catch {
    return null;
  }
  if (!names.length) return null;
  const profiles = names.map((n) => JSON.parse(readFileSync(path.join(dir, n), 'utf8')) as CpuProfile);
  const windowed = profiles.every((p) => p.startTime <= toUs && p.endTime >= fromUs);
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  const webhooks = new Map<string, number>();
  let busyMs = 0;
  let idleMs = 0;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    let t = profile.startTime;
    for (let i = 0; i < samples.length; i++) {
      t += deltas[i] ?? 0;
      if (windowed && (t < fromUs || t > toUs)) continue;
      const ms = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
      const node = byId.get(samples[i])!;
      const name = node.callFrame.functionName;
      if (name === '(idle)') {
        idleMs += ms;
        continue;
      }
      if (name === '(root)') continue;
      busyMs += ms;
      // A native function (no script) counts where its nearest caller with a script is.
      let owner = node;
      while (!owner.callFrame.url && !SPECIAL.has(owner.callFrame.functionName) && parent.has(owner.id)) owner = byId.get(parent.get(owner.id)!)!;
      const url = owner.callFrame.url;
      add(areas, SPECIAL.get(owner.callFrame.functionName) ?? (url ? AREAS.find(([, test]) => test(url))![0] : 'native, no caller with a script'), ms);
      add(functions, `${name || '(anonymous)'} ${node.callFrame.url ? `${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}` : '(native)'}`, ms);
      // Each function of the webhooks module on the stack, once per sample: its time with what it calls synchronously.
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const f = byId.get(id)!.callFrame;
        if (!f.url.includes('/src/modules/webhooks/')) continue;
        const key = `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
        if (!seen.has(key)) add(webhooks, key, ms);
        seen.add(key);
      }
    }
  }
  const sorted = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { files: names.length, windowed, busyMs, idleMs, areas: sorted(areas, AREAS.length + 3), functions: sorted(functions, top), webhooks: sorted(webhooks, 10) };
}

/**
 * The summary as lines of text. V8 samples on the wall clock: a thread that waits for a core (a saturated machine) is
 * sampled in the function it was in, so the sampled busy time may exceed the CPU time /proc counts (`cpuMs`, the same
 * window): the shares say where the time goes, not the milliseconds.
 */
export function profileLines(label: string, s: ProfileSummary, cpuMs: number): string[] {
  const share = (ms: number) => `${((ms / s.busyMs) * 100).toFixed(1).padStart(5)} % (${ms.toFixed(0)} ms)`;
  return [
    `webhooks: ${label}: CPU profile of ${s.files} process(es)${s.windowed ? ', the measured window' : ', WHOLE run (the window fell outside the profiles)'}: `
      + `${s.busyMs.toFixed(0)} ms sampled busy, ${s.idleMs.toFixed(0)} ms idle (wall time; CPU time from /proc over the window: ${cpuMs.toFixed(0)} ms)`,
    '  self time by area:',
    ...s.areas.map(([area, ms]) => `    ${share(ms)}  ${area}`),
    '  top functions by self time:',
    ...s.functions.map(([f, ms]) => `    ${share(ms)}  ${f}`),
    '  functions of src/modules/webhooks, with what they call synchronously (not across an await):',
    ...s.webhooks.map(([f, ms]) => `    ${share(ms)}  ${f}`),
  ];
}
