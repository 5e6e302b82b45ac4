import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CpuProfileSummary } from './probe';

/** What the server process measured between `begin` and `end` (bench/probe.ts, answered by bench/dashboard-server.ts and bench/dashboard-floor-server.ts). */
export interface Probe {
  statements: number;
  cpuMs: number;
  allocatedBytes: number;
  gcs: number;
  gcMs: number;
  peakRss: number;
  maxRss: number;
}

/**
 * A SQL statement a server process sent between `record` and `recorded` (bench/dashboard-server.ts: from knex's
 * events; bench/dashboard-floor-server.ts: its own pool's): times in ms from `record`.
 */
export interface RecordedStatement {
  /** Which ORM (or pool) it went through: `primary` (the only one of the bench's service process), `floor`. */
  role: string;
  /** The connection it went on (knex's connection uid; the floor's client number). */
  connection: string;
  /** knex's transaction id, when it ran inside one. */
  transaction: string | null;
  sql: string;
  bindings: unknown[];
  sentMs: number;
  answeredMs: number | null;
  rows: number | null;
}

/** The server's memory now (bench/probe.ts, command `rss`), in bytes. */
export interface Rss {
  rss: number;
  /** Highest resident set sampled (every 10 ms) since the process started or the last `reset`. */
  peakRss: number;
  /** The kernel's high-water mark of the resident set over the process's life. */
  maxRss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** `ipc`: the process answered; `proc`: it did not in time, read from /proc/<pid>/status by the parent. */
  source: 'ipc' | 'proc';
}

/** How the server process ended, when it did. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines it wrote on stderr (e.g. V8's "JavaScript heap out of memory" and its trace). */
  stderrTail: string;
}

/** Bytes of stderr kept for `Exit.stderrTail`. */
const STDERR_TAIL = 16 * 1024;

/** The service in its own process, and the probe it answers over IPC. */
export class ServerProcess {
  private stderr = '';
  private exitInfo: Exit | null = null;
  /** Resolves when the process has exited, whatever the reason. */
  readonly exited: Promise<Exit>;

  private constructor(private readonly child: ChildProcess, readonly url: string) {
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitInfo ??= { code, signal, stderrTail: this.stderr };
        resolve(this.exitInfo);
      };
      if (child.exitCode !== null || child.signalCode !== null) done(child.exitCode, child.signalCode);
      else child.once('exit', done);
    });
    child.stderr?.on('data', (chunk: Buffer) => { this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL); });
  }

  /**
   * `script`: the server's module beside this one, bench/dashboard-server.ts by default (the service); another one
   * answering the same probe protocol (bench/dashboard-floor-server.ts) is measured alike.
   */
  static async start(databaseUrl: string, env: Record<string, string> = {}, script = 'dashboard-server.js'): Promise<ServerProcess> {
    const child = fork(path.join(__dirname, script), [], {
      env: {
        PATH: process.env.PATH, NODE_ENV: 'production', DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1',
        AUTH_DEV_PROVIDER: 'true', RATE_LIMIT_STORE: 'memory', RATE_LIMIT_API_POINTS: '100000000', RATE_LIMIT_TOKEN_POINTS: '1000',
        // A benchmark's clients share one token but stand for many users: no caller's budget or share applies.
        RATE_LIMIT_GRAPHQL_COST_POINTS: '1000000000000', GRAPHQL_QUEUE_LENGTH_PER_CALLER: '100000',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        ...(process.env.BENCH_PROFILE_FILE ? { BENCH_PROFILE_FILE: process.env.BENCH_PROFILE_FILE } : {}),
        ...env,
      },
      // Node's own flags for the server (e.g. BENCH_SERVER_NODE_FLAGS="--cpu-prof --max-semi-space-size=32").
      execArgv: (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      // The access log goes where a production one would go: out of the process, here nowhere. Its stderr is
      // passed on, and its tail kept: how it died, when it does.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    // The tail is kept from the start: a process that fails to start says why.
    let early = '';
    const keep = (chunk: Buffer) => { early = (early + chunk.toString('utf8')).slice(-STDERR_TAIL); };
    child.stderr!.on('data', keep);
    const url = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code, signal) => reject(new Error(`the server exited with ${code ?? signal}${early ? `: ${early.slice(-2000)}` : ''}`)));
      child.on('message', (m: { cmd: string; url?: string }) => { if (m.cmd === 'listening') resolve(m.url!); });
    });
    child.stderr!.off('data', keep);
    const server = new ServerProcess(child, url);
    server.stderr = early;
    return server;
  }

  /** The process id, for a look at /proc. */
  get pid(): number {
    return this.child.pid!;
  }

  /** How it ended, or null while it runs. */
  get exit(): Exit | null {
    return this.exitInfo;
  }

  /**
   * Sends `cmd` and resolves with the message named `answer`; with `timeoutMs`, null when none came by then;
   * null at once when the process has exited (or exits meanwhile).
   */
  private ask<T>(cmd: string | { cmd: string } & Record<string, unknown>, answer: string): Promise<T>;
  private ask<T>(cmd: string | { cmd: string } & Record<string, unknown>, answer: string, timeoutMs: number): Promise<T | null>;
  private ask<T>(cmd: string | { cmd: string } & Record<string, unknown>, answer: string, timeoutMs?: number): Promise<T | null> {
    if (this.exitInfo || !this.child.connected) return Promise.resolve(null);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (value: T | null) => {
        clearTimeout(timer);
        this.child.off('message', listener);
        this.child.off('exit', gone);
        resolve(value);
      };
      const listener = (m: { cmd: string }) => { if (m.cmd === answer) finish(m as T); };
      const gone = () => finish(null);
      this.child.on('message', listener);
      this.child.once('exit', gone);
      if (timeoutMs !== undefined) timer = setTimeout(() => finish(null), timeoutMs);
      try {
        this.child.send(typeof cmd === 'string' ? { cmd } : cmd);
      } catch {
        finish(null);
      }
    });
  }

  /** Runs `fn` inside a probe window of the server. */
  async probe<T>(fn: () => Promise<T>): Promise<{ result: T; probe: Probe }> {
    await this.ask('begin', 'begun');
    const result = await fn();
    await this.idle();
    return { result, probe: await this.ask<Probe>('end', 'ended') };
  }

  /** Runs `fn` under V8's CPU profiler in the server (bench/probe.ts, `profile-start` / `profile-stop`). */
  async profile<T>(fn: () => Promise<T>): Promise<{ result: T; profile: CpuProfileSummary }> {
    await this.ask('profile-start', 'profiling');
    const result = await fn();
    await this.idle();
    return { result, profile: await this.ask<CpuProfileSummary>('profile-stop', 'profiled') };
  }

  /** Sends a command of the server's own (the floor's `configure`); its answer named `answer`, null once the process has exited. */
  command<T>(message: { cmd: string } & Record<string, unknown>, answer: string): Promise<T | null> {
    return this.ask<T>(message, answer, 600_000);
  }

  /** Runs `fn` while the server records the SQL statements it sends (their text, bindings, connection, times). */
  async record<T>(fn: () => Promise<T>): Promise<{ result: T; statements: RecordedStatement[] }> {
    await this.ask('record', 'recording');
    const result = await fn();
    await this.idle();
    return { result, statements: (await this.ask<{ statements: RecordedStatement[] }>('recorded', 'recorded'))?.statements ?? [] };
  }

  /** Resolves once the server has answered every request it received. */
  async idle(): Promise<void> {
    await this.ask('idle', 'idle');
  }

  /**
   * The server's resident memory: asked over IPC, and read from /proc when it does not answer within
   * `timeoutMs` (a process busy collecting garbage); null once it has exited. `reset` starts a new peak.
   */
  async rss(options: { reset?: boolean; timeoutMs?: number } = {}): Promise<Rss | null> {
    const answer = await this.ask<Omit<Rss, 'source'>>({ cmd: 'rss', reset: options.reset ?? false }, 'rss', options.timeoutMs ?? 5000);
    if (answer) {
      const { rss, peakRss, maxRss, heapUsed, heapTotal, external } = answer;
      return { rss, peakRss, maxRss, heapUsed, heapTotal, external, source: 'ipc' };
    }
    if (this.exitInfo) return null;
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
      return { rss: kb('VmRSS'), peakRss: kb('VmHWM'), maxRss: kb('VmHWM'), heapUsed: 0, heapTotal: 0, external: 0, source: 'proc' };
    } catch {
      return null;
    }
  }

  /** Stops the server; kills it when it has not exited within `timeoutMs`. Resolves at once if it has exited. */
  async stop(timeoutMs = 30_000): Promise<Exit> {
    if (this.exitInfo) return this.exitInfo;
    try {
      this.child.send({ cmd: 'stop' });
    } catch {
      this.child.kill('SIGKILL');
    }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }
}
