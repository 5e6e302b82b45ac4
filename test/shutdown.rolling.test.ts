import http from 'node:http';
import { DEMO_IDS, DEMO_USERS } from '../src/seed/demo-data';
import { freshDatabase } from './support/app';
import { tokenFor } from './support/auth';
import { queryRows } from './support/databases';
import { startInstanceProcess, type InstanceProcess } from './support/instance-process';

/**
 * A rolling deploy's SIGTERM under load (issue 33, docs/shutdown.md): the service as its own process (src/server.ts),
 * 30 clients that open a new connection per request (`Connection: close`, as a balancer without keep-alive does) and
 * 30 keep-alive clients, reads and writes, closed loop, and SIGTERM in the middle. Every request sent before the
 * signal, or after it on a connection the service had taken, is answered (running, waiting in the admission queue, or
 * just accepted, queued by the kernel on a busy instance): no reset, none left unanswered; a connection refused once
 * the listener has closed is fine (counted apart); the process exits within
 * SHUTDOWN_TIMEOUT_MS. The grace is 0 (NODE_ENV test's default, set explicitly): the listener closes at the signal.
 */

// Production's default: the requests taken before the signal finish within it. With 5 s, a CI machine loaded by other
// work (load average 9 on 2 cores: 60 requests in flight, most slower than 4 s) had its requests' database work ended
// at 4 s, and the process cut at 5 s (exit 1): the bound doing its job on a machine too slow for it.
const TIMEOUT_MS = 10000;
const CLIENTS = 30;
const LOAD_BEFORE_MS = 2000;
const P = '/api/svc/v1';
const PROJECTS = [DEMO_IDS.projects.residence, DEMO_IDS.projects.school, DEMO_IDS.projects.nordOffices];

type ClientKind = 'new-connection' | 'keep-alive';

interface Outcome {
  client: ClientKind;
  method: 'GET' | 'POST';
  name?: string;
  startedAt: number;
  /** The connection was established (TCP handshake done) when the request was written or failed. */
  established: boolean;
  /** When the connection was established (or found open, for a reused keep-alive socket). */
  establishedAt?: number;
  reused: boolean;
  status?: number;
  connectionHeader?: string;
  error?: string;
  endedAt: number;
}

type Category = 'answered' | 'refused' | 'reset' | 'unanswered' | 'other error';

function categorize(o: Outcome): Category {
  if (o.status !== undefined) return 'answered';
  if (/ECONNREFUSED/.test(o.error ?? '')) return 'refused';
  // Reset before the handshake completed on the client's side (`connect ECONNRESET`): the kernel dropped a connection
  // queued as the listener closed; the service never took it, as with a refusal.
  if (!o.established && /ECONNRESET/.test(o.error ?? '')) return 'refused';
  if (/unanswered/.test(o.error ?? '')) return 'unanswered';
  if (o.established && /ECONNRESET|EPIPE|socket hang up/i.test(o.error ?? '')) return 'reset';
  return 'other error';
}

/** One request over node:http on a new connection (`agent: false`) or the client's keep-alive agent. */
function send(base: string, client: ClientKind, agent: http.Agent | false, token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Outcome> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const outcome: Outcome = { client, method, startedAt: Date.now(), established: false, reused: false, endedAt: 0 };
    if (body) outcome.name = (body as { name: string }).name;
    let done = false;
    const finish = (extra: Partial<Outcome>) => {
      if (done) return;
      done = true;
      resolve({ ...outcome, ...extra, endedAt: Date.now() });
    };
    const req = http.request(base + path, {
      method,
      agent,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(client === 'new-connection' ? { Connection: 'close' } : {}),
        ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
      },
    }, (res) => {
      res.resume();
      res.on('end', () => finish({ status: res.statusCode, connectionHeader: res.headers.connection }));
      res.on('error', (err) => finish({ error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` }));
    });
    req.on('socket', (socket) => {
      outcome.reused = req.reusedSocket;
      const established = () => {
        outcome.established = true;
        outcome.establishedAt = Date.now();
      };
      if (!socket.connecting) established();
      else socket.once('connect', established);
    });
    req.setTimeout(15000, () => req.destroy(new Error('unanswered within 15 s')));
    req.on('error', (err) => finish({ error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` }));
    req.end(payload);
  });
}

describe('SIGTERM under load: a rolling deploy', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let instance: InstanceProcess;
  const outcomes: Outcome[] = [];
  let signalledAt = 0;
  let exit: { code: number | null; at: number } | 'still running' = 'still running';
  let stored = new Set<string>();

  beforeAll(async () => {
    db = await freshDatabase('shutdownrolling');
    instance = await startInstanceProcess(db.url, 'http://127.0.0.1:1', {
      SHUTDOWN_GRACE_MS: '0', SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => instance.proc.once('exit', (code) => resolve({ code, at: Date.now() })));
    const token = await tokenFor(instance.url, DEMO_USERS.architect);
    let running = true;
    let gone = false;
    void exited.then(() => { gone = true; });
    let n = 0;
    const client = async (kind: ClientKind, c: number) => {
      const agent = kind === 'keep-alive' ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : false;
      try {
        for (let i = c; running && !gone; i++) {
          const project = PROJECTS[i % PROJECTS.length];
          const o = i % 3 === 0
            ? await send(instance.url, kind, agent, token, 'POST', `${P}/projects/${project}/trades`, { name: `rolling-${kind}-${++n}`, number: '88', short_name: 'RL' })
            : await send(instance.url, kind, agent, token, 'GET', `${P}/projects/${project}/trades`);
          outcomes.push(o);
          // The instance is gone for this client (a balancer would send it elsewhere).
          if (categorize(o) === 'refused') break;
        }
      } finally {
        if (agent) agent.destroy();
      }
    };
    const clients = Promise.all([
      ...Array.from({ length: CLIENTS }, (_, c) => client('new-connection', c)),
      ...Array.from({ length: CLIENTS }, (_, c) => client('keep-alive', c)),
    ]);
    await new Promise((r) => setTimeout(r, LOAD_BEFORE_MS));
    signalledAt = Date.now();
    instance.proc.kill('SIGTERM');
    exit = await Promise.race([exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), TIMEOUT_MS + 5000))]);
    running = false;
    if (exit === 'still running') instance.proc.kill('SIGKILL');
    await clients;
    const rows = await queryRows<{ name: string }>(db.url, `select name from project_trade where name like 'rolling-%'`);
    stored = new Set(rows.map((r) => r.name));

    const table: Record<string, Record<Category, number>> = {};
    for (const o of outcomes) {
      const label = `${o.client} ${o.startedAt < signalledAt ? 'sent before SIGTERM' : 'sent after SIGTERM'}`;
      table[label] ??= { answered: 0, refused: 0, reset: 0, unanswered: 0, 'other error': 0 };
      table[label][categorize(o)]++;
    }
    const statuses: Record<string, number> = {};
    for (const o of outcomes) if (o.status !== undefined) statuses[`${o.method} ${o.status}`] = (statuses[`${o.method} ${o.status}`] ?? 0) + 1;
    const errors = [...new Set(outcomes.filter((o) => categorize(o) !== 'answered' && categorize(o) !== 'refused')
      .map((o) => `${o.client}${o.reused ? ' (reused socket)' : ''}: ${o.error} (${o.endedAt - signalledAt} ms after SIGTERM)`))].slice(0, 20);
    console.log(`SIGTERM under load: ${outcomes.length} requests, exit ${exit === 'still running' ? 'still running' : `${exit.code} after ${exit.at - signalledAt} ms`}\n${
      JSON.stringify({ by_client: table, statuses, errors }, null, 1)}`);
  }, 60000);

  afterAll(async () => {
    if (instance && instance.proc.exitCode === null && instance.proc.signalCode === null) instance.proc.kill('SIGKILL');
    await db?.drop();
  });

  // After the signal these clients go on opening connections (a balancer would stop within SHUTDOWN_GRACE_MS, here 0):
  // one the kernel queues in the instant between the service's last accept and its listener's close is reset by the
  // kernel, which no server can answer (docs/shutdown.md). What the service took before the signal is its own.
  it('answers every request sent before the signal, and every one sent after it on a connection it had taken: 0 resets (ECONNRESET, socket hang up), 0 unanswered', () => {
    // Each client had a request out before the signal (a loaded machine serves few more in LOAD_BEFORE_MS).
    expect(outcomes.filter((o) => o.startedAt < signalledAt).length).toBeGreaterThanOrEqual(2 * CLIENTS);
    // Sent before the signal: answered, whatever else happened to it; after it, on a taken connection: never reset.
    const broken = outcomes.filter((o) => (o.startedAt < signalledAt && categorize(o) !== 'answered')
      || (o.reused && ['reset', 'unanswered'].includes(categorize(o))));
    expect(broken.map((o) => `${o.client}${o.reused ? ' (reused socket)' : ''} ${o.method}: ${o.error}`)).toEqual([]);
  });

  it('answers every request accepted before SIGTERM (its connection established before the signal)', () => {
    const accepted = outcomes.filter((o) => o.established && o.establishedAt! < signalledAt && o.startedAt < signalledAt);
    expect(accepted.filter((o) => categorize(o) !== 'answered').map((o) => `${o.client} ${o.method}: ${o.error}`)).toEqual([]);
  });

  it('refuses only connections, never requests it took: nothing but answers, refused connections and resets of connections opened after the signal', () => {
    expect(outcomes.filter((o) => categorize(o) === 'other error').map((o) => `${o.client} ${o.method}: ${o.error}`)).toEqual([]);
  });

  it('stores every write it acknowledged', () => {
    const acknowledged = outcomes.filter((o) => o.method === 'POST' && o.status === 201).map((o) => o.name!);
    expect(acknowledged.length).toBeGreaterThan(10);
    expect(acknowledged.filter((name) => !stored.has(name))).toEqual([]);
  });

  it('exits within SHUTDOWN_TIMEOUT_MS, cleanly (code 0)', () => {
    expect(exit).not.toBe('still running');
    const { code, at } = exit as { code: number | null; at: number };
    // The slack covers the signal's delivery and the process's teardown on a loaded machine.
    expect(at - signalledAt).toBeLessThan(TIMEOUT_MS + 1000);
    expect(code).toBe(0);
  });
});
