import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';

/** The user of the admin console (`admin_users`): `admin(command)` logs in as it to the `pgbouncer` database. */
const PGBOUNCER_ADMIN = 'pgbouncer_admin';

/** Debian's pgbouncer package; .ci/run installs it when missing. */
const PGBOUNCER = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';

/** Why no PgBouncer can run here (an allowed skip, as for Chromium: .ci/run installs it where it can), or null. */
export function pgbouncerMissing(): string | null {
  if (!existsSync(PGBOUNCER)) return `no PgBouncer at ${PGBOUNCER} (.ci/run installs Debian's pgbouncer package; PGBOUNCER_PATH names another)`;
  return null;
}

export interface PgBouncer {
  port: number;
  /** The URL of `database` through the pooler (any user: auth_type any; the pooler logs in to the server itself). */
  url(database: string): string;
  /** What PgBouncer logged so far. */
  log(): string;
  /**
   * One command of the admin console (PAUSE, RESUME, RECONNECT, RELOAD, SHOW ..., KILL ...) sent as a simple query on a
   * connection of its own, as `psql -h 127.0.0.1 -p <port> -U pgbouncer_admin pgbouncer` would: its rows (SHOW).
   * PAUSE resolves once every server connection of the database has been released.
   */
  admin(command: string): Promise<Array<Record<string, unknown>>>;
  /**
   * Points `[databases]` at another server (host and port of `serverUrl`), rewriting the config file, then RELOAD:
   * new server connections go there; those to the old target are closed once released (PgBouncer tags them when a
   * database's address changes). What a switchover does, between PAUSE and RESUME.
   */
  retarget(serverUrl: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A PgBouncer of the calling test's own, in front of `serverUrl` (a cluster of the test's own: never the
 * machine's server's configuration), on a port the OS gives it, with a config file of its own. Transaction
 * pooling by default, as production deployments run it; `settings` adds or overrides `[pgbouncer]` lines.
 * PgBouncer refuses to run as root: as root it drops to the `postgres` user (`-u`).
 */
export async function startPgBouncer(serverUrl: string, settings: Record<string, string> = {}): Promise<PgBouncer> {
  const missing = pgbouncerMissing();
  if (missing) throw new Error(missing);
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tender-pgbouncer-'));
  chmodSync(dir, 0o777);
  const logFile = path.join(dir, 'pgbouncer.log');
  const targetOf = (url: string) => {
    const server = new URL(url);
    return [`host=${server.hostname}`, `port=${server.port || 5432}`, `user=${decodeURIComponent(server.username || 'postgres')}`]
      .concat(server.password ? [`password=${decodeURIComponent(server.password)}`] : []).join(' ');
  };
  const lines = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'any',
    pool_mode: 'transaction',
    default_pool_size: '5',
    max_client_conn: '500',
    logfile: logFile,
    pidfile: path.join(dir, 'pgbouncer.pid'),
    // Ours are short; a server connection is not kept open past a test.
    server_idle_timeout: '30',
    admin_users: PGBOUNCER_ADMIN,
    ...settings,
  };
  const config = path.join(dir, 'pgbouncer.ini');
  const writeConfig = (url: string) => {
    writeFileSync(config, [
      '[databases]',
      `* = ${targetOf(url)}`,
      '[pgbouncer]',
      ...Object.entries(lines).map(([name, value]) => `${name} = ${value}`),
      '',
    ].join('\n'));
    chmodSync(config, 0o644);
  };
  writeConfig(serverUrl);
  const asRoot = process.getuid?.() === 0;
  const proc: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  proc.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
  proc.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
  const readLog = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') + output.join('');
  for (const until = Date.now() + 10_000; !/listening on 127\.0\.0\.1:\d+/.test(readLog());) {
    if (proc.exitCode !== null || Date.now() > until) {
      throw new Error(`PgBouncer did not start (exit ${proc.exitCode}):\n${readLog()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  async function admin(command: string): Promise<Array<Record<string, unknown>>> {
    const session = new Client({ host: '127.0.0.1', port, user: PGBOUNCER_ADMIN, database: 'pgbouncer' });
    session.on('error', () => undefined);
    await session.connect();
    try {
      // No parameters: node-postgres sends it as a simple query, the only protocol the console speaks.
      return (await session.query(command)).rows;
    } finally {
      await session.end().catch(() => undefined);
    }
  }
  return {
    port,
    url: (database) => `postgres://tender@127.0.0.1:${port}/${database}`,
    log: readLog,
    admin,
    async retarget(url) {
      writeConfig(url);
      await admin('RELOAD');
    },
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((resolve) => proc.once('exit', resolve));
        // SIGINT: PgBouncer's safe shutdown waits for clients; SIGTERM closes everything at once.
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
