import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './ports';

/**
 * A Redis server of the calling test's own (Debian's redis-server, on a port the OS gives), for tests that stop, kill or
 * freeze the bus under running instances: never the machine's Redis on 6379. It keeps nothing on disk, as the
 * machine's does not: a kill loses every key.
 */
export interface OwnRedis {
  url: string;
  /** SIGKILL: connections cut, every key lost. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing answers. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

/** Why no Redis of a test's own can be started here (an allowed skip: .ci/run installs it where it can), or null. */
export function ownRedisMissing(): string | null {
  return existsSync(REDIS_SERVER) ? null : `no redis-server at ${REDIS_SERVER} (REDIS_SERVER_PATH names another)`;
}

/** Starts a Redis of the calling test's own; resolves once it answers. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const start = async () => {
    const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--loglevel', 'warning'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    proc = child;
    const output: string[] = [];
    child.stdout!.on('data', (c: Buffer) => void output.push(c.toString()));
    child.stderr!.on('data', (c: Buffer) => void output.push(c.toString()));
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${output.join('')}`))));
    // Ready once it accepts a connection.
    const { Redis } = await import('ioredis');
    for (const until = Date.now() + 10000; ;) {
      const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      probe.on('error', () => undefined);
      const ok = await Promise.race([probe.connect().then(() => probe.ping()).then(() => true, () => false), exited]);
      probe.disconnect();
      if (ok) return;
      if (Date.now() > until) throw new Error(`redis-server did not accept connections on ${port}:\n${output.join('')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async () => {
    const child = proc;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
    proc = null;
  };
  await start();
  process.once('exit', () => proc?.kill('SIGKILL'));
  return {
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    freeze: () => void proc?.kill('SIGSTOP'),
    thaw: () => void proc?.kill('SIGCONT'),
    stop: kill,
  };
}
