import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as Pg } from 'pg';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { DEMO_IDS } from '../src/seed/demo-ids';
import { freshDatabase } from './support/app';
import { tokenFor } from './support/auth';
import { startInstanceProcess, type InstanceProcess } from './support/instance-process';
import { eventually } from './support/subscriptions';

// Subscribers that stop reading (issue 41): what waits to be sent to a connection is bounded, in bytes and in time
// since its last write went out; past it the connection is closed, counted, and nobody else waits for it.

const STALLED = 100;
const PROJECTS = 100;
const ROUNDS = 30;
/** A client has this long to read what was sent to it (the keep-alive's interval): a stalled one is told within twice that, and cut one more interval later. */
const SEND_TIMEOUT_MS = 5000;
const QUERY = 'subscription { projectChanged { projectId changes project { id name archived createdAt updatedAt } } }';

/** The instance's resident memory, from the kernel. */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** The instance's memory once its garbage is collected (test/support/measured-instance.ts). */
function retained(instance: InstanceProcess): Promise<NodeJS.MemoryUsage> {
  return new Promise((resolve) => {
    instance.proc.once('message', (usage) => resolve(usage as NodeJS.MemoryUsage));
    instance.proc.send('memory');
  });
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

/** A graphql-ws client whose socket the test can stop reading (ws's pause: nothing more is read from the kernel). */
function client(url: string, token: string): { client: Client; socket: Promise<WebSocket>; closed: Promise<{ code: number; reason: string }> } {
  let onSocket!: (ws: WebSocket) => void;
  let onClosed!: (c: { code: number; reason: string }) => void;
  const socket = new Promise<WebSocket>((resolve) => { onSocket = resolve; });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => { onClosed = resolve; });
  const c = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols);
        onSocket(this);
      }
    },
    connectionParams: { Authorization: `Bearer ${token}` },
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => undefined,
    on: { closed: (e) => onClosed({ code: (e as { code: number }).code, reason: String((e as { reason: string }).reason) }) },
  });
  return { client: c, socket, closed };
}

describe('subscribers that stop reading', () => {
  let t: InstanceProcess;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let pg: Pg;
  let token: string;
  let projectIds: string[];
  beforeAll(async () => {
    db = await freshDatabase('slowreaders');
    pg = new Pg({ connectionString: db.url });
    await pg.connect();
    projectIds = (await pg.query<{ id: string }>(`insert into project (id, created_at, updated_at, legacy_id, organization_id, name, construction_type, trade_list_id, response_type)
      select gen_random_uuid(), now(), now(), 'SLOWPRJ' || lpad(i::text, 10, '0'), $1, 'Slow ' || i, 'office', $2, 'DPGF'
      from generate_series(1, ${PROJECTS}) i returning id`, [DEMO_IDS.organizations.atelierDemo, DEMO_IDS.tradeLists.standard])).rows.map((r) => r.id);
    t = await startInstanceProcess(db.url, 'http://127.0.0.1:1', { SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER: String(STALLED + 10), SUBSCRIPTIONS_SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
      NODE_OPTIONS: '--expose-gc' }, path.join(__dirname, 'support/measured-instance.ts'));
    token = await tokenFor(t.url, 'architect@demo.test');
  }, 60_000);
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
    await db?.drop();
  });

  it('closes each connection over its bound, counts it, keeps the memory bounded, and delays no healthy subscriber', async () => {
    const stalled = Array.from({ length: STALLED }, () => client(t.url, token));
    const healthy = client(t.url, token);
    // When the healthy subscriber saw each project at each round (the name carries the round).
    const seen = new Map<string, number>();
    const seenAt: number[] = Array(2 * ROUNDS).fill(0);
    healthy.client.subscribe<{ projectChanged: { projectId: string; project: { name: string } } }>({ query: QUERY }, {
      next: ({ data }) => {
        const round = Number(/^round (\d+) /.exec(data!.projectChanged.project.name)?.[1] ?? -1);
        seen.set(data!.projectChanged.projectId, round);
        for (let r = 0; r < seenAt.length; r++) {
          if (!seenAt[r] && projectIds.every((id) => (seen.get(id) ?? -1) >= r)) seenAt[r] = Date.now();
        }
      },
      error: () => undefined,
      complete: () => undefined,
    });
    for (const s of stalled) s.client.subscribe({ query: QUERY }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    const metric = async () => (await (await fetch(`${t.url}/metrics`)).text());
    await eventually(async () => /graphql_subscriptions_active\{subscription="projectChanged"\} 101\b/.test(await metric()), 'every subscription running');

    const committedAt: number[] = [];
    const pad = 'x'.repeat(230);
    /** ROUNDS transactions, 100 ms apart, each renaming every project; the instance's RSS growth until `settled`. */
    const rounds = async (first: number, settled: () => Promise<boolean>) => {
      const before = rssOf(t.proc.pid!);
      let peak = before;
      const sampling = setInterval(() => { peak = Math.max(peak, rssOf(t.proc.pid!)); }, 50);
      try {
        for (let r = first; r < first + ROUNDS; r++) {
          await pg.query('update project set name = $1 || $2, updated_at = now() where id = any($3)', [`round ${r} `, pad, projectIds]);
          committedAt[r] = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await eventually(async () => seenAt[first + ROUNDS - 1] > 0, 'the healthy subscriber has the last round');
        await eventually(settled, 'settled');
      } finally {
        clearInterval(sampling);
      }
      return { before, peak };
    };
    // The same load with every subscriber reading first: V8's heap grows to what such a burst needs whoever reads
    // (measured on a cold instance: RSS +98 MB with nobody stalled, +82 to +128 MB with 100 stalled), so what the
    // stalled connections hold is what is retained once the garbage is collected, beyond what the same load retains
    // (measured at the end of the rounds: the stalled connections told, their clients not reading yet).
    const reading = await rounds(0, async () => true);
    const afterReading = await retained(t);
    for (const s of stalled) (await s.socket).pause();
    // Once told, a stalled client that reads again before it is cut reads what was sent before, then the close.
    let told = false;
    const resumeOnceTold = setInterval(async () => {
      if (told || !/graphql_subscription_slow_readers_total\{bound="time"\} 100\b/.test(await metric())) return;
      told = true;
      for (const s of stalled) (await s.socket).resume();
    }, 100);
    const stalling = await rounds(ROUNDS, async () => true);
    const afterStalling = await retained(t);
    await eventually(async () => told, 'every stalled connection told').finally(() => clearInterval(resumeOnceTold));
    await eventually(async () => /graphql_subscription_connections 1\b/.test(await metric()), 'the stalled connections closed');
    const delays = seenAt.map((at, r) => at - committedAt[r]);
    const metrics = await metric();
    // What is held: V8's heap and the buffers outside it, once collected. RSS does not come down after a collection
    // (the allocator keeps its pages), so it is reported, not judged.
    const held = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external;
    const growth = held(afterStalling) - held(afterReading);
    console.log(`after a GC: heap and buffers ${mb(held(afterReading))} after every subscriber read, ${mb(held(afterStalling))} with ${STALLED} stalled (RSS ${mb(afterReading.rss)}, ${mb(afterStalling.rss)}); `
      + `RSS growth without a GC ${mb(reading.peak - reading.before)}, then ${mb(stalling.peak - stalling.before)}; the healthy subscriber's longest wait ${Math.max(...delays.slice(0, ROUNDS))} ms, then ${Math.max(...delays.slice(ROUNDS))} ms`);
    // Closed once each, over the time bound (the kernel took every byte: nothing waited in the process).
    expect(/graphql_subscription_slow_readers_total\{bound="time"\} (\d+)/.exec(metrics)?.[1]).toBe(String(STALLED));
    expect(metrics).not.toMatch(/graphql_subscription_slow_readers_total\{bound="bytes"\} [1-9]/);
    expect(metrics).toMatch(/graphql_subscription_connections 1\b/);
    const closes = await Promise.all(stalled.map((s) => s.closed));
    expect(closes.filter((c) => c.code !== 4503)).toEqual([]);
    expect(closes[0].reason).toMatch(/^The client reads too slowly: .*; reconnect later$/);
    // While the others stall (in the rounds before, this test's process also read for the 100 others).
    expect(Math.max(...delays.slice(ROUNDS))).toBeLessThan(2000);
    expect(growth).toBeLessThan(40 * 1024 * 1024);
    await Promise.all([...stalled, healthy].map((s) => s.client.dispose()));
  }, 120_000);

  it('closes a connection with more than SUBSCRIPTIONS_MAX_BUFFERED_BYTES waiting in the process, once the kernel takes no more', async () => {
    const bytes = await startInstanceProcess(db.url, 'http://127.0.0.1:1', { SUBSCRIPTIONS_MAX_BUFFERED_BYTES: '65536', SUBSCRIPTIONS_SEND_TIMEOUT_MS: '600000', SUBSCRIPTIONS_MAX_PER_CONNECTION: '40' });
    try {
      const full = client(bytes.url, await tokenFor(bytes.url, 'architect@demo.test'));
      // 40 subscriptions of every project, each update of about 7 KB (the project 14 times): graphql-ws holds one
      // update per subscription in the process once the kernel takes no more, up to 280 KB here.
      const query = `subscription { projectChanged { projectId ${Array.from({ length: 14 }, (_, i) => `p${i}: project { id name organizationId archived createdAt updatedAt }`).join(' ')} } }`;
      for (let i = 0; i < 40; i++) full.client.subscribe({ query }, { next: () => undefined, error: () => undefined, complete: () => undefined });
      const metric = async () => (await (await fetch(`${bytes.url}/metrics`)).text());
      await eventually(async () => /graphql_subscriptions_active\{subscription="projectChanged"\} 40\b/.test(await metric()), 'every subscription running');
      (await full.socket).pause();
      let closed = false;
      for (let r = 0; r < 100 && !closed; r++) {
        await pg.query('update project set name = $1, updated_at = now() where id = any($2)', [`full ${r} ${'y'.repeat(230)}`, projectIds]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        closed = /graphql_subscription_slow_readers_total\{bound="bytes"\} 1\b/.test(await metric());
      }
      expect(closed).toBe(true);
      (await full.socket).resume();
      expect(await full.closed).toEqual({ code: 4503, reason: expect.stringMatching(/^The client reads too slowly: over 65536 bytes wait to be sent to it; reconnect later$/) });
      await full.client.dispose();
    } finally {
      await bytes.stop();
    }
  }, 120_000);
});
