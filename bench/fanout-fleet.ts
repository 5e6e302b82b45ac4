import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../test/support/ports';
import { sleep } from './commit-latency';

// The service instances of bench/fanout.bench.ts: each a process of the built service (dist/src/server.js, what `npm
// start` runs), its output in a log file of its own, its health and metrics read over HTTP as an operator would.

/** `bus`: CHANGE_BUS_URL set, one elected decoder; `own`: none, each instance decodes for itself (/healthz: in-process). */
export type CaptureMode = 'bus' | 'own';

/** What /healthz says of change capture. */
export interface ChangesHealth {
  mode: string;
  hearing: boolean;
  decoder: string;
}

export interface FleetOptions {
  databaseUrl: string;
  mode: CaptureMode;
  instances: number;
  /** The bus and its keys' prefix (mode bus). */
  busUrl: string;
  busKeyPrefix: string;
  /** Where the instances' log files go, and their working directory (no .env there: nothing but this environment applies). */
  logDir: string;
  /** Names the log files. */
  label: string;
  /** Added last (BENCH_SERVER_ENV). */
  env: Record<string, string>;
  /** Node's flags added to BENCH_SERVER_NODE_FLAGS's (bench/webhooks-throughput.ts: `--cpu-prof`). */
  nodeFlags?: string[];
}

/** Every instance's, so that one token serves them all (its issuer) and /metrics is served on the main port. */
const PUBLIC_URL = 'http://tender.fanout.bench';
const METRICS_TOKEN = 'bench-fanout-metrics-token';
/** Bound of a fleet's start: every instance listening and hearing (16 processes starting at once on 2 cores). */
const START_TIMEOUT_MS = 180_000;

export class Instance {
  /** Resolves once the process has exited, however (listened for from its spawn on: an exit is never missed). */
  private readonly gone: Promise<unknown>;

  private constructor(private readonly child: ChildProcess, readonly url: string, readonly logFile: string) {
    this.gone = new Promise((resolve) => child.once('exit', resolve));
  }

  static async start(options: FleetOptions, index: number): Promise<Instance> {
    const port = await freePort();
    const logFile = path.join(options.logDir, `${options.label}-${index}.log`);
    const fd = openSync(logFile, 'w');
    // Node's own flags for the instances, as bench/server-process.ts takes them (e.g. BENCH_SERVER_NODE_FLAGS="--cpu-prof").
    const flags = [...(process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean), ...(options.nodeFlags ?? [])];
    const child = spawn(process.execPath, [...flags, path.join(__dirname, '..', 'src', `server${path.extname(__filename)}`)], {
      cwd: options.logDir,
      env: {
        PATH: process.env.PATH, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL,
        DATABASE_URL: options.databaseUrl, DATABASE_DIRECT_URL: options.databaseUrl,
        // Small, so that 16 of them stay cheap: a request pool of 2, no webhook delivery loop, WARN and above only.
        DATABASE_POOL_SIZE: '2', WEBHOOK_DELIVERY: 'false', LOG_LEVEL: 'warn',
        // The bench migrated the database; tokens from the built-in provider; the bench's one caller is many users.
        DATABASE_MIGRATE_ON_START: 'false', AUTH_DEV_PROVIDER: 'true',
        RATE_LIMIT_STORE: 'memory', RATE_LIMIT_API_POINTS: '100000000', RATE_LIMIT_TOKEN_POINTS: '1000',
        RATE_LIMIT_GRAPHQL_COST_POINTS: '1000000000000', GRAPHQL_QUEUE_LENGTH_PER_CALLER: '100000',
        METRICS_TOKEN, SHUTDOWN_GRACE_MS: '0',
        ...(options.mode === 'bus' ? { CHANGE_BUS_URL: options.busUrl, CHANGE_BUS_KEY_PREFIX: options.busKeyPrefix } : {}),
        ...options.env,
      },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    return new Instance(child, `http://127.0.0.1:${port}`, logFile);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Change capture as /healthz says; null while it does not answer. */
  async changes(): Promise<ChangesHealth | null> {
    try {
      const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2000) });
      return res.ok ? ((await res.json()) as { changes: ChangesHealth }).changes : null;
    } catch {
      return null;
    }
  }

  async metrics(): Promise<string> {
    const res = await fetch(`${this.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` }, signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`fanout: /metrics of ${this.url} answered ${res.status}`);
    return res.text();
  }

  /** Its WARN and worse log lines (pino levels 40 and up). */
  problems(): string[] {
    let text = '';
    try {
      text = readFileSync(this.logFile, 'utf8');
    } catch {
      return [];
    }
    return text.split('\n').filter((line) => /"level":(4|5|6)0\b/.test(line) || /^(Tender BFF failed|Error|Configuration error)/.test(line));
  }

  /** SIGTERM, SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 15_000): Promise<void> {
    if (this.exited) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await this.gone;
    clearTimeout(timer);
  }
}

/** N instances of one configuration. */
export class Fleet {
  private constructor(readonly instances: Instance[], readonly mode: CaptureMode) {}

  /** Starts them all at once and waits until each hears (/healthz `changes.hearing`) in the expected mode. */
  static async start(options: FleetOptions): Promise<Fleet> {
    mkdirSync(options.logDir, { recursive: true });
    const instances: Instance[] = [];
    const fleet = new Fleet(instances, options.mode);
    try {
      for (let i = 0; i < options.instances; i++) instances.push(await Instance.start(options, i));
      await fleet.untilHearing();
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    return fleet;
  }

  async statuses(): Promise<Array<ChangesHealth | null>> {
    return Promise.all(this.instances.map((i) => i.changes()));
  }

  /** "1 streaming, 15 standby": the decoders' statuses, counted. */
  async decoders(): Promise<string> {
    const counts = new Map<string, number>();
    for (const s of await this.statuses()) counts.set(s?.decoder ?? 'no answer', (counts.get(s?.decoder ?? 'no answer') ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1]).map(([status, n]) => `${n} ${status}`).join(', ');
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.stop()));
  }

  private async untilHearing(): Promise<void> {
    const expected = this.mode === 'bus' ? 'bus' : 'in-process';
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const gone = this.instances.find((i) => i.exited);
      if (gone) throw new Error(`fanout: an instance exited while starting: ${gone.problems().slice(-3).join(' | ') || `see ${gone.logFile}`}`);
      const statuses = await this.statuses();
      const wrong = statuses.find((s) => s && s.mode !== expected);
      if (wrong) throw new Error(`fanout: an instance runs change capture in mode ${wrong.mode}, not ${expected}`);
      if (statuses.every((s) => s?.hearing)) return;
      if (Date.now() > deadline) {
        throw new Error(`fanout: ${statuses.filter((s) => !s?.hearing).length} of ${this.instances.length} instances not hearing after ${START_TIMEOUT_MS / 1000} s`);
      }
      await sleep(250);
    }
  }
}

/** One series of a Prometheus text exposition: the sum of every sample named `name` whose labels contain `labels`. */
export function metricSum(text: string, name: string, labels = ''): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!/^[{ ]/.test(rest) || (labels && !rest.includes(labels))) continue;
    total += Number(rest.slice(rest.lastIndexOf(' ') + 1));
  }
  return total;
}
