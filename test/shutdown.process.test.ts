import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS } from '../src/seed/demo-data';
import { freshDatabase } from './support/app';

/**
 * The service as its own process (src/server.ts, run from the sources through swc), stopped with SIGTERM
 * while requests are in flight on new and on keep-alive connections, some of them writes held by locks
 * from a side connection. docs/shutdown.md describes the sequence.
 */

const GRACE_MS = 2500;
const TIMEOUT_MS = 5000;
const P = '/api/svc/v1';
const RESIDENCE = DEMO_IDS.projects.residence; // its writes are held, then released during the drain
const SCHOOL = DEMO_IDS.projects.school; // its writes stay blocked until the database work is cancelled

type Outcome = { status: number; headers: http.IncomingHttpHeaders; body: string; reusedSocket: boolean } | { error: string };
const answered = (o: Outcome): o is Extract<Outcome, { status: number }> => 'status' in o;

/** One request over node:http, so that the connection (new or kept alive) is the test's choice. */
function send(base: string, method: string, p: string, opts: { agent: http.Agent | false; token?: string; body?: unknown; onSent?: () => void }): Promise<Outcome> {
  return new Promise((resolve) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(base + p, {
      method,
      agent: opts.agent,
      headers: {
        ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}),
        ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}),
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, reusedSocket: req.reusedSocket }));
      res.on('error', (err) => resolve({ error: String(err) }));
    });
    req.on('error', (err) => resolve({ error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` }));
    req.on('finish', () => opts.onSent?.());
    req.end(body);
  });
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

interface Exit { code: number | null; signal: NodeJS.Signals | null; at: number }

/** Starts src/server.ts in a child process; resolves once it listens. */
async function startService(env: Record<string, string>): Promise<{ proc: ChildProcess; url: string; exited: Promise<Exit>; output: string[] }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawn(process.execPath, ['-r', path.join(__dirname, 'support/swc-register.js'), path.join(__dirname, '../src/server.ts')], {
    env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<Exit>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
  const listening = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (/"msg":"listening"/.test(output.join(''))) resolve();
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    void exited.then((e) => reject(new Error(`the service exited (${e.code ?? e.signal}) before listening:\n${output.join('')}`)));
  });
  await listening;
  return { proc, url, exited, output };
}

/** A side transaction holding a project row for update: writes below the project wait on it. */
async function holdProject(url: string, projectId: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query('select id from project where id = $1 for update', [projectId]);
  return client;
}

async function waitingOnLocks(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

describe('SIGTERM on the service process (src/server.ts)', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let service: Awaited<ReturnType<typeof startService>>;
  const outcomes = {
    newConnections: [] as Outcome[],
    keepAliveIdle: [] as Outcome[],
    readyBefore: null as Outcome | null,
    readyDuringGrace: null as Outcome | null,
    heldWrites: [] as Array<{ name: string; outcome: Outcome }>,
    blockedWrites: [] as Array<{ name: string; outcome: Outcome }>,
  };
  let signalledAt = 0;
  let exit: Exit | 'still running' = 'still running';
  let stored = new Set<string>();

  beforeAll(async () => {
    db = await freshDatabase('shutdownprocess');
    service = await startService({ DATABASE_URL: db.url, SHUTDOWN_GRACE_MS: String(GRACE_MS), SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS) });
    const base = service.url;
    const form = new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: DEMO_USERS.architect, password: DEMO_PASSWORD, scope: 'svc' });
    const tokenRes = await fetch(`${base}/auth/token`, { method: 'POST', body: form, headers: { Connection: 'close' } });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;

    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const writers = new http.Agent({ keepAlive: true, maxSockets: 6 });
    outcomes.readyBefore = await send(base, 'GET', '/readyz', { agent: false });

    // Slow writes on keep-alive connections: three held until 1 s into the shutdown, three blocked for good.
    const residenceLock = await holdProject(db.url, RESIDENCE);
    const schoolLock = await holdProject(db.url, SCHOOL);
    const write = (projectId: string, name: string) => send(base, 'POST', `${P}/projects/${projectId}/trades`, { agent: writers, token, body: { name, number: '99', short_name: 'SD' } });
    const held = ['held-1', 'held-2', 'held-3'].map((name) => write(RESIDENCE, name).then((outcome) => outcomes.heldWrites.push({ name, outcome })));
    const blocked = ['blocked-1', 'blocked-2', 'blocked-3'].map((name) => write(SCHOOL, name).then((outcome) => outcomes.blockedWrites.push({ name, outcome })));
    for (let i = 0; i < 200 && (await waitingOnLocks(db.url)) < 6; i++) await new Promise((r) => setTimeout(r, 25));

    // Four idle keep-alive connections (opened late: the server closes idle ones after 5 s).
    await Promise.all([0, 1, 2, 3].map(() => send(base, 'GET', '/healthz', { agent: keepAlive })));
    // Thirty requests on new connections, written to their sockets just before the signal.
    let sent = 0;
    let fresh: Promise<Outcome>[] = [];
    await new Promise<void>((resolve) => {
      fresh = Array.from({ length: 30 }, () => send(base, 'GET', `${P}/projects`, { agent: false, token, onSent: () => ++sent === 30 && resolve() }));
    });
    signalledAt = Date.now();
    service.proc.kill('SIGTERM');

    // During the grace period: readiness, and the next request of each idle keep-alive connection.
    await new Promise((r) => setTimeout(r, 100));
    outcomes.readyDuringGrace = await send(base, 'GET', '/readyz', { agent: false });
    outcomes.keepAliveIdle = await Promise.all([0, 1, 2, 3].map(() => send(base, 'GET', '/healthz', { agent: keepAlive })));

    await new Promise((r) => setTimeout(r, Math.max(0, signalledAt + 1000 - Date.now())));
    await residenceLock.query('commit');
    await residenceLock.end();
    await Promise.all(held);

    const gaveUp = new Promise<'still running'>((r) => setTimeout(() => r('still running'), TIMEOUT_MS + 5000));
    exit = await Promise.race([service.exited, gaveUp]);
    if (exit === 'still running') service.proc.kill('SIGKILL');
    await schoolLock.query('rollback').catch(() => undefined);
    await schoolLock.end();
    await Promise.all(blocked);
    outcomes.newConnections = await Promise.all(fresh);
    keepAlive.destroy();
    writers.destroy();

    const client = new Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query("select name from project_trade where name like 'held-%' or name like 'blocked-%'");
    await client.end();
    stored = new Set(rows.map((r) => r.name as string));
  }, 60000);

  afterAll(async () => {
    if (service?.proc.exitCode === null && service.proc.signalCode === null) service.proc.kill('SIGKILL');
    await db?.drop();
  });

  it('answers every request sent on a new connection before the signal (none reset), verifying tokens without calling itself', () => {
    expect(outcomes.newConnections).toHaveLength(30);
    expect(outcomes.newConnections.filter((o) => !answered(o) || o.status !== 200)).toEqual([]);
  });

  it('answers /readyz 503 from the signal on, while the listener still accepts connections', () => {
    expect(outcomes.readyBefore).toMatchObject({ status: 200 });
    expect(outcomes.readyDuringGrace).toMatchObject({ status: 503 });
    expect(answered(outcomes.readyDuringGrace!) && JSON.parse(outcomes.readyDuringGrace.body)).toMatchObject({ code: 503 });
  });

  it('answers the next request of each kept-alive connection with Connection: close', () => {
    expect(outcomes.keepAliveIdle.map((o) => (answered(o) ? { status: o.status, connection: o.headers.connection, reused: o.reusedSocket } : o)))
      .toEqual([0, 1, 2, 3].map(() => ({ status: 200, connection: 'close', reused: true })));
  });

  it('lets a write slowed by a lock finish: answered 201 with Connection: close, and stored', () => {
    expect(outcomes.heldWrites.map(({ name, outcome }) => (answered(outcome) ? { name, status: outcome.status, connection: outcome.headers.connection } : { name, ...outcome })).sort((a, b) => a.name.localeCompare(b.name)))
      .toEqual(['held-1', 'held-2', 'held-3'].map((name) => ({ name, status: 201, connection: 'close' })));
    expect([...stored].filter((n) => n.startsWith('held-')).sort()).toEqual(['held-1', 'held-2', 'held-3']);
  });

  it('cancels a write still blocked on a lock near SHUTDOWN_TIMEOUT_MS: answered 503 with Retry-After, and nothing stored', () => {
    expect(outcomes.blockedWrites.map(({ name, outcome }) => (answered(outcome) ? { name, status: outcome.status, retryAfter: outcome.headers['retry-after'] !== undefined } : { name, ...outcome })).sort((a, b) => a.name.localeCompare(b.name)))
      .toEqual(['blocked-1', 'blocked-2', 'blocked-3'].map((name) => ({ name, status: 503, retryAfter: true })));
    expect([...stored].filter((n) => n.startsWith('blocked-'))).toEqual([]);
  });

  it('exits within SHUTDOWN_TIMEOUT_MS, cleanly, although a statement was blocked on a lock', () => {
    expect(exit).not.toBe('still running');
    const { code, at } = exit as Exit;
    expect(code).toBe(0);
    // The slack covers the signal's delivery and the process's teardown on a loaded machine.
    expect(at - signalledAt).toBeLessThan(TIMEOUT_MS + 1000);
  });
});
