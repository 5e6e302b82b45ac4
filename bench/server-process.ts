import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** What the server process measured between `begin` and `end` (bench/dashboard-server.ts). */
export interface Probe {
  statements: number;
  cpuMs: number;
  allocatedBytes: number;
  gcs: number;
  gcMs: number;
  peakRss: number;
  maxRss: number;
}


/** The service in its own process, and the probe it answers over IPC. */
export class ServerProcess {
  private constructor(private readonly child: ChildProcess, readonly url: string) {}

  static async start(databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
    const child = fork(path.join(__dirname, 'dashboard-server.js'), [], {
      env: {
        PATH: process.env.PATH, NODE_ENV: 'production', DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1',
        AUTH_DEV_PROVIDER: 'true', RATE_LIMIT_STORE: 'memory', RATE_LIMIT_API_POINTS: '100000000', RATE_LIMIT_TOKEN_POINTS: '1000',
        // A benchmark's clients share one token but stand for many users: no caller's budget or share applies.
        RATE_LIMIT_GRAPHQL_COST_POINTS: '1000000000000', GRAPHQL_QUEUE_LENGTH_PER_CALLER: '100000',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        ...env,
      },
      // Node's own flags for the server (e.g. BENCH_SERVER_NODE_FLAGS="--cpu-prof --max-semi-space-size=32").
      execArgv: (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      // The access log goes where a production one would go: out of the process, here nowhere.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
      child.on('message', (m: { cmd: string; url?: string }) => { if (m.cmd === 'listening') resolve(m.url!); });
    });
    return new ServerProcess(child, url);
  }

  private ask<T>(cmd: string, answer: string): Promise<T> {
    return new Promise((resolve) => {
      const listener = (m: { cmd: string }) => {
        if (m.cmd !== answer) return;
        this.child.off('message', listener);
        resolve(m as T);
      };
      this.child.on('message', listener);
      this.child.send({ cmd });
    });
  }

  /** Runs `fn` inside a probe window of the server. */
  async probe<T>(fn: () => Promise<T>): Promise<{ result: T; probe: Probe }> {
    await this.ask('begin', 'begun');
    const result = await fn();
    await this.idle();
    return { result, probe: await this.ask<Probe>('end', 'ended') };
  }

  /** Resolves once the server has answered every request it received. */
  async idle(): Promise<void> {
    await this.ask('idle', 'idle');
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ cmd: 'stop' });
    await exited;
  }
}
