import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * A PostgreSQL cluster of a benchmark's own (bench/write-ceiling.bench.ts, bench/fanout.bench.ts), never the machine's
 * server: made with `initdb` and run with `pg_ctl` of the machine's PostgreSQL binaries, as the `postgres` user when the
 * bench runs as root (PostgreSQL refuses to run as root), data under `root` (reset at each start), on `port`, listening
 * on 127.0.0.1 only. Durable as production: `fsync`, `synchronous_commit` and `full_page_writes` on (their defaults,
 * said out loud: group commit matters), `wal_level = logical`; each bench adds its own settings.
 */

export interface Cluster {
  port: number;
  serverUrl: string;
  dataDir: string;
  /** The postmaster's process id. */
  postmaster(): number;
  stop(): void;
}

export interface ClusterOptions {
  /** Directory of the data, the log and the socket (absolute). */
  root: string;
  /** The binaries' directory (initdb, pg_ctl). */
  pgBin: string;
  /** How errors name the bench, and the variable that names another binaries directory. */
  bench: string;
  pgBinVariable: string;
  /** The bench's file, written as a comment above its settings. */
  source: string;
  /** postgresql.conf lines added to the common ones (`name = value`). */
  settings: string[];
}

export function startCluster(port: number, options: ClusterOptions): Cluster {
  const { root, pgBin } = options;
  const dataDir = path.join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) => {
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(pgBin, tool), ...args]] : [path.join(pgBin, tool), args];
    const result = spawnSync(cmd, argv, { encoding: 'utf8', cwd: '/' });
    if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
    return result.stdout;
  };
  if (!existsSync(path.join(pgBin, 'initdb'))) throw new Error(`${options.bench}: no initdb in ${pgBin} (${options.pgBinVariable} names the binaries directory)`);
  // A run killed earlier may have left its server running on this directory.
  if (existsSync(path.join(dataDir, 'postmaster.pid'))) {
    try {
      run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
    } catch { /* not running */ }
  }
  rmSync(root, { recursive: true, force: true });
  // Its parents with the default mode (a recursive mkdir would give them 0700 too, which `postgres` cannot traverse).
  mkdirSync(path.dirname(root), { recursive: true });
  mkdirSync(root, { mode: 0o700 });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(root, uid, gid);
  }
  run('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  appendFileSync(path.join(dataDir, 'postgresql.conf'), [
    '', `# ${options.source}`,
    "listen_addresses = '127.0.0.1'", `port = ${port}`, `unix_socket_directories = '${root}'`,
    'wal_level = logical', 'fsync = on', 'synchronous_commit = on', 'full_page_writes = on',
    ...options.settings,
    '',
  ].join('\n'));
  run('pg_ctl', ['-D', dataDir, '-l', path.join(root, 'server.log'), '-w', 'start']);
  return {
    port,
    serverUrl: `postgres://postgres@127.0.0.1:${port}`,
    dataDir,
    postmaster: () => Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]),
    stop: () => {
      if (existsSync(path.join(dataDir, 'postmaster.pid'))) run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    },
  };
}
