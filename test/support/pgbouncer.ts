import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './ports';

/** Debian's pgbouncer package; .ci/run installs it when missing. */
export const PGBOUNCER = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';

/** Why no PgBouncer can run here (the one allowed skip, as for Chromium), or null. */
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
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tender-pgbouncer-'));
  chmodSync(dir, 0o777);
  const logFile = path.join(dir, 'pgbouncer.log');
  const target = [`host=${server.hostname}`, `port=${server.port || 5432}`, `user=${decodeURIComponent(server.username || 'postgres')}`]
    .concat(server.password ? [`password=${decodeURIComponent(server.password)}`] : []).join(' ');
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
    ...settings,
  };
  const config = path.join(dir, 'pgbouncer.ini');
  writeFileSync(config, [
    '[databases]',
    `* = ${target}`,
    '[pgbouncer]',
    ...Object.entries(lines).map(([name, value]) => `${name} = ${value}`),
    '',
  ].join('\n'));
  chmodSync(config, 0o644);
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
  return {
    port,
    url: (database) => `postgres://tender@127.0.0.1:${port}/${database}`,
    log: readLog,
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

/** The pgbouncer binary's version line (for messages). */
export function pgbouncerVersion(): string {
  return spawnSync(PGBOUNCER, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? '';
}
