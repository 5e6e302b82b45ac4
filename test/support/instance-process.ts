import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './ports';
import { RECEIVERS_ON_THIS_MACHINE } from './receivers-env';

export interface InstanceProcess {
  url: string;
  proc: ChildProcess;
  /** What it printed so far (JSON log lines and the start banner). */
  output(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** Processes still running when the test process exits (a test that timed out): killed, never left behind. */
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const child of running) child.kill('SIGKILL');
};

/**
 * The service as a process of its own (src/server.ts through swc), on `databaseUrl`; resolves once it listens.
 * Nothing held in memory can be shared with the test's own instance: what reaches one from the other went
 * through the database.
 */
export async function startInstanceProcess(databaseUrl: string, publicUrl: string, env: Record<string, string> = {}, entry = path.join(__dirname, '../../src/server.ts')): Promise<InstanceProcess> {
  // A free port can be taken by another test's process between its choice and the instance's listen: another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), databaseUrl, publicUrl, env, entry);
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test((err as Error).message)) throw err;
    }
  }
}

async function startOn(port: number, databaseUrl: string, publicUrl: string, env: Record<string, string>, entry: string): Promise<InstanceProcess> {
  // An IPC channel too: an entry of a test's own (test/support/traced-instance.ts) answers questions over it.
  const proc = spawn(process.execPath, ['-r', path.join(__dirname, 'swc-register.js'), entry], {
    env: {
      PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: publicUrl,
      DATABASE_URL: databaseUrl, RATE_LIMIT_API_POINTS: '1000000', RATE_LIMIT_TOKEN_POINTS: '1000000', ...RECEIVERS_ON_THIS_MACHINE, ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // One listener while any runs, none otherwise: test files share their worker's process.
  if (!running.size) process.on('exit', killRunning);
  running.add(proc);
  proc.once('exit', () => {
    running.delete(proc);
    if (!running.size) process.off('exit', killRunning);
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => void output.push(chunk.toString());
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (/"msg":"listening"/.test(output.join(''))) resolve();
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`the instance exited (${code}) before listening:\n${output.join('')}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    output: () => output.join(''),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
