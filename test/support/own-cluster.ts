import 'reflect-metadata';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../mikro-orm.config';
import { adminQuery, dropDatabase, withDatabase } from '../../src/platform/database/admin';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../src/platform/database/embedded';
import { loadDemoData } from '../../src/seed/demo-data';
import { freePort } from './ports';

/**
 * A PostgreSQL cluster of one test file's own, for fault tests that kill, restart, freeze and thaw the
 * database under a running service: never the machine's server on 5432, never the run's shared test
 * cluster. Each listens on a port the OS gives it at start (kept across restarts).
 *
 * Commits are durable (synchronous_commit on; fsync off only survives a crash of PostgreSQL, not of the
 * machine, which is all these tests cause), so "every acknowledged write survives a kill" can be asserted.
 */
export interface OwnCluster {
  port: number;
  /** Server URL without a database name. */
  serverUrl: string;
  /** Creates `name` afresh, migrated, with the demo data (unless `seed` is false); returns its URL. */
  createDatabase(name: string, opts?: { seed?: boolean }): Promise<string>;
  /** PostgreSQL's immediate shutdown (what `pg_ctl stop -m immediate` does): no checkpoint, connections cut. */
  kill(): Promise<void>;
  /** Starts the cluster again after kill() or stop() (crash recovery after a kill). */
  restart(): Promise<void>;
  /** SIGSTOP to the postmaster and every backend: the server accepts TCP connections but answers nothing. */
  freeze(): void;
  /** SIGCONT to every process freeze() stopped. */
  thaw(): void;
  /** A clean (fast) shutdown. */
  stop(): Promise<void>;
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function postmasterPid(dataDir: string): number | null {
  const file = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && isRunning(pid) ? pid : null;
}

/** The postmaster and its children (backends, checkpointer, WAL writer...). */
function clusterPids(postmaster: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid; the command (field 2) may hold spaces, so split after it.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) children.push(Number(entry));
    } catch { /* gone meanwhile */ }
  }
  return [postmaster, ...children];
}

async function waitUntilGone(pid: number, ms: number): Promise<void> {
  for (const until = Date.now() + ms; isRunning(pid) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
  if (isRunning(pid)) throw new Error(`PostgreSQL process ${pid} did not exit`);
}

/** Creates `name` afresh on a server of a test's own, migrated, with the demo data (unless `seed` is false); returns its URL. */
export async function createServiceDatabase(serverUrl: string, name: string, opts: { seed?: boolean } = {}): Promise<string> {
  await dropDatabase(serverUrl, name);
  await adminQuery(serverUrl, `create database "${name}"`);
  const url = withDatabase(serverUrl, name);
  const orm = await MikroORM.init(ormConfig(url));
  try {
    await orm.getMigrator().up();
    if (opts.seed !== false) await loadDemoData(orm.em.fork());
  } finally {
    await orm.close(true);
  }
  return url;
}

/**
 * Starts (initialising on first use, under .data/own-pg-<name>) a cluster of the calling test's own; `settings` are
 * `-c` settings of its own, after (so over) the defaults (`max_wal_senders=4`: a server as scarce as PostgreSQL's default).
 */
export async function startOwnCluster(name: string, settings: string[] = []): Promise<OwnCluster> {
  const port = await freePort();
  const dataDir = path.resolve(__dirname, `../../.data/own-pg-${name}`);
  // A run killed while its cluster was frozen leaves stopped processes behind: wake them so the start
  // below can shut them down.
  const leftover = postmasterPid(dataDir);
  if (leftover) for (const pid of clusterPids(leftover)) process.kill(pid, 'SIGCONT');

  const start = () => startEmbeddedCluster({
    dataDir,
    port,
    postgresFlags: ['-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=50', ...settings.flatMap((s) => ['-c', s])],
  });
  let cluster: EmbeddedCluster | null = await start();
  let frozen: number[] = [];

  const running = (): number => {
    const pid = postmasterPid(dataDir);
    if (!pid) throw new Error(`own cluster ${name} is not running`);
    return pid;
  };

  const own: OwnCluster = {
    port,
    serverUrl: cluster.serverUrl,
    createDatabase: (db, opts) => createServiceDatabase(cluster!.serverUrl, db, opts),
    async kill() {
      const pid = running();
      process.kill(pid, 'SIGQUIT');
      await waitUntilGone(pid, 10000);
      // Its handle would wait forever for an exit that already happened.
      cluster = null;
    },
    async restart() {
      cluster = await start();
    },
    freeze() {
      frozen = clusterPids(running());
      for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch { /* exited meanwhile */ }
      }
      frozen = [];
    },
    async stop() {
      if (frozen.length) own.thaw();
      const current = cluster;
      cluster = null;
      await current?.stop();
    },
  };
  return own;
}
