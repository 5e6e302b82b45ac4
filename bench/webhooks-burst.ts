import 'reflect-metadata';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { benchServer, median, withScratchDatabase } from './support';
import { DEMO_IDS } from '../src/seed/demo-ids';

/**
 * The burst part of `npm run bench webhooks` (bench/webhooks.bench.ts; issue 26; figures in docs/benchmarks.md, "Webhooks"): "10,000 answers inserted in 100 transactions,
 * three endpoints: time from commit to receipt (p50, p99), attempts per second, and the write cost the outbox adds
 * per version."
 *
 * - Delivery: three receivers on loopback (answering 200 at once, recording the first receipt of each
 *   `webhook-id` and counting repeats, a sample of signatures verified with `standardwebhooks`), three endpoints
 *   of Atelier Demo for `contractor.answered`, the service in this process with
 *   WEBHOOK_MAX_ATTEMPTS_PER_SECOND=100000 (no pacing: the delivery path's own figure). TRANSACTIONS transactions
 *   of PER_TRANSACTION ANSWERED versions (one INSERT each, plain SQL as the contractor portal writes them) back to
 *   back; latency is a receipt's time minus the commit of its version's transaction (matched by the payload's
 *   `version_id`). First on webhook tables never analyzed (BENCH_UNANALYZED=0 skips it), then analyzed as
 *   autovacuum would have. Then without a backlog: PACED transactions one every PACED_GAP_MS, and PAIRS pairs of
 *   one-version transactions from two connections at once, every PAIRS_GAP_MS.
 * - Write cost, the service stopped (only the write is timed): the same inserts, and SINGLE transactions of one
 *   version each, with no endpoint enabled anywhere (the triggers return at their first statement) and with the
 *   three endpoints, in turn block by block; the median transaction, ROUNDS rounds, medians.
 * - The default WEBHOOK_MAX_ATTEMPTS_PER_SECOND (100 per organization and instance): THROTTLED transactions.
 *
 * Server: BENCH_DATABASE_URL, else DATABASE_URL, else an embedded cluster under .data/bench-pg; loopback only.
 */

const TRANSACTIONS = Number(process.env.BENCH_TRANSACTIONS ?? 100);
const PER_TRANSACTION = Number(process.env.BENCH_PER_TRANSACTION ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SINGLE = Number(process.env.BENCH_SINGLE ?? 1000);
const PACED = Number(process.env.BENCH_PACED ?? 10);
const PACED_GAP_MS = Number(process.env.BENCH_PACED_GAP_MS ?? 500);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 50);
const PAIRS_GAP_MS = Number(process.env.BENCH_PAIRS_GAP_MS ?? 100);
/** 1: first the burst on webhook tables never analyzed (a new database on a server without autovacuum). */
const UNANALYZED = process.env.BENCH_UNANALYZED !== '0';
const THROTTLED = Number(process.env.BENCH_THROTTLED ?? 4);
const ENDPOINTS = 3;
/** One delivery in this many has its signature verified at each receiver. */
const VERIFY_EVERY = 20;
/** No pacing: the delivery path's own figure. BENCH_WEBHOOK_CONCURRENCY sets WEBHOOK_CONCURRENCY (default 32). */
const FAST = {
  WEBHOOK_MAX_ATTEMPTS_PER_SECOND: '100000',
  ...(process.env.BENCH_WEBHOOK_CONCURRENCY ? { WEBHOOK_CONCURRENCY: process.env.BENCH_WEBHOOK_CONCURRENCY } : {}),
};

interface Receipt {
  id: string;
  at: number;
  timestamp: string;
  signature: string;
  body: string;
}

/** A receiver as an integration runs one: answers 200 at once; keeps the first receipt of each webhook-id. */
class Receiver {
  readonly first = new Map<string, Receipt>();
  duplicates = 0;
  requests = 0;
  url = '';
  secret = '';
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = String(req.headers['webhook-id']);
      this.requests++;
      if (this.first.has(id)) this.duplicates++;
      else {
        this.first.set(id, {
          id, at, timestamp: String(req.headers['webhook-timestamp']), signature: String(req.headers['webhook-signature']),
          body: Buffer.concat(chunks).toString('utf8'),
        });
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  reset(): void {
    this.first.clear();
    this.duplicates = 0;
    this.requests = 0;
  }

  /** Verifies every VERIFY_EVERY-th receipt with the specification's library; returns how many were verified. */
  verifySample(): number {
    const hook = new Webhook(this.secret);
    let n = 0;
    for (const r of [...this.first.values()].filter((_, i) => i % VERIFY_EVERY === 0)) {
      hook.verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature });
      n++;
    }
    return n;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One transaction's versions in one statement, as a portal's batch (template_id from the trigger). */
const INSERT = `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, sent_at)
  select x.id, now(), now(), x.document_id, x.version, 'ANSWERED', 1000 + x.version % 9000, 0, now()
  from unnest($1::uuid[], $2::uuid[], $3::int[]) as x(id, document_id, version)`;

interface Delivered {
  label: string;
  deliveries: number;
  p50: number;
  p99: number;
  max: number;
  /** First commit to the last receipt. */
  totalMs: number;
  /** First receipt to the last. */
  spanMs: number;
  attemptsPerSecond: number;
  duplicates: number;
  attemptRows: number;
  /** Attempts that did not succeed (retried later), by outcome and error. */
  unsuccessful: string;
  verified: number;
}

/** Writes versions of the organization's documents, numbered above every existing version (unique per document). */
class Writer {
  private static next = 0;
  constructor(readonly client: Client, private readonly documents: string[]) {}

  async init(): Promise<this> {
    const { rows: [{ max }] } = await this.client.query<{ max: number }>('select coalesce(max(version), 0)::int as max from document_version');
    Writer.next = Math.max(Writer.next, max + 1);
    return this;
  }

  /** One transaction of `n` versions (one statement), spread over the documents; its versions' ids and commit time. */
  async transaction(n: number): Promise<{ ids: string[]; committedAt: number }> {
    const first = Writer.next;
    Writer.next += n;
    const ids = Array.from({ length: n }, () => randomUUID());
    const documents = ids.map((_, i) => this.documents[(first + i) % this.documents.length]);
    const versions = ids.map((_, i) => first + i);
    await this.client.query('begin');
    await this.client.query(INSERT, [ids, documents, versions]);
    await this.client.query('commit');
    return { ids, committedAt: performance.now() };
  }
}

async function waitFor(receivers: Receiver[], expected: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (receivers.some((r) => r.first.size < expected)) {
    if (Date.now() > deadline) {
      throw new Error(`webhooks: timed out; received ${receivers.map((r) => r.first.size).join(' / ')} of ${expected} per endpoint`);
    }
    await sleep(20);
  }
}

interface Workload {
  label: string;
  /** Steps, each one transaction per writer at once. */
  steps: number;
  perTransaction: number;
  /** From the start of a step to the next (0: back to back). */
  gapMs: number;
}

/** The workload's transactions, then waits until every endpoint received every version once. */
async function deliver(workload: Workload, writers: Writer[], receivers: Receiver[]): Promise<Delivered> {
  const { label, steps, perTransaction, gapMs } = workload;
  const { client } = writers[0];
  for (const r of receivers) r.reset();
  const attempts = async () => (await client.query<{ n: number }>('select count(*)::int as n from webhook_attempt')).rows[0].n;
  const attemptsBefore = await attempts();
  const { rows: [{ now: since }] } = await client.query<{ now: Date }>('select clock_timestamp() as now');
  const committed = new Map<string, number>();
  let firstCommit = Infinity;
  for (let step = 0; step < steps; step++) {
    const started = performance.now();
    for (const { ids, committedAt } of await Promise.all(writers.map((w) => w.transaction(perTransaction)))) {
      firstCommit = Math.min(firstCommit, committedAt);
      for (const id of ids) committed.set(id, committedAt);
    }
    if (gapMs) await sleep(Math.max(0, gapMs - (performance.now() - started)));
  }
  await waitFor(receivers, committed.size, 180000);
  // Late duplicates, and the attempts' rows (written every 20 ms by the loop).
  await sleep(500);
  const latencies: number[] = [];
  let firstReceipt = Infinity;
  let lastReceipt = 0;
  for (const r of receivers) {
    for (const receipt of r.first.values()) {
      const versionId = (JSON.parse(receipt.body) as { data: { version_id: string } }).data.version_id;
      const at = committed.get(versionId);
      if (at === undefined) throw new Error(`webhooks: a delivery of a version this run did not write (${versionId})`);
      latencies.push(receipt.at - at);
      firstReceipt = Math.min(firstReceipt, receipt.at);
      lastReceipt = Math.max(lastReceipt, receipt.at);
    }
  }
  const verified = receivers.reduce((n, r) => n + r.verifySample(), 0);
  const { rows: failures } = await client.query<{ outcome: string; error: string | null; n: number }>(`select outcome, error, count(*)::int as n
    from webhook_attempt where attempted_at >= $1 and outcome <> 'succeeded' group by 1, 2 order by 3 desc`, [since]);
  const figures: Delivered = {
    label,
    deliveries: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    totalMs: lastReceipt - firstCommit,
    spanMs: lastReceipt - firstReceipt,
    attemptsPerSecond: latencies.length / ((lastReceipt - firstReceipt) / 1000),
    duplicates: receivers.reduce((n, r) => n + r.duplicates, 0),
    attemptRows: (await attempts()) - attemptsBefore,
    unsuccessful: failures.map((f) => `${f.n} ${f.outcome}${f.error ? ` (${f.error})` : ''}`).join(', ') || 'none',
    verified,
  };
  console.log(`webhooks: ${label}: ${figures.deliveries} deliveries, commit to receipt p50 ${figures.p50.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms, `
    + `max ${figures.max.toFixed(1)} ms; all received ${(figures.totalMs / 1000).toFixed(2)} s after the first commit; `
    + `${figures.attemptsPerSecond.toFixed(0)} attempts/s; ${figures.duplicates} duplicates; ${figures.attemptRows} attempts recorded, unsuccessful: ${figures.unsuccessful}; ${verified} signatures verified`);
  return figures;
}

async function createEndpoint(server: { url: string; token: string }, receiver: Receiver): Promise<void> {
  const res = await fetch(`${server.url}/api/svc/v1/webhooks`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ organization_id: DEMO_IDS.organizations.atelierDemo, url: receiver.url, event_types: ['contractor.answered'] }),
  });
  const body = (await res.json()) as { secret: string };
  if (res.status !== 201) throw new Error(`webhooks: creating an endpoint answered ${res.status}: ${JSON.stringify(body)}`);
  receiver.secret = body.secret;
}

/** The outbox emptied between measures (not timed), so that each starts alike. */
const EMPTY_OUTBOX = 'truncate webhook_attempt, webhook_delivery, webhook_event';
/** What autovacuum would have done on a server that runs it (this one may not): the claim's plan depends on it. */
const ANALYZE = 'analyze webhook_endpoint, webhook_event, webhook_delivery, webhook_attempt';

/**
 * The write cost: `blocks` blocks of `perBlock` transactions of `perTransaction` versions, the endpoints disabled
 * and enabled in turn block by block (so that the disk's commit latency drifts alike for both); the median
 * transaction of each, in µs per version.
 */
async function writeCost(writer: Writer, blocks: number, perBlock: number, perTransaction: number): Promise<{ none: number; three: number }> {
  const { client } = writer;
  await client.query(EMPTY_OUTBOX);
  await client.query('vacuum analyze document_version');
  const times = { none: [] as number[], three: [] as number[] };
  for (let block = 0; block < blocks; block++) {
    const enabled = block % 2 === 1;
    await client.query(`update webhook_endpoint set disabled_at = ${enabled ? 'null' : 'clock_timestamp()'}`);
    for (let t = 0; t < perBlock; t++) {
      const started = performance.now();
      await writer.transaction(perTransaction);
      times[enabled ? 'three' : 'none'].push(((performance.now() - started) * 1000) / perTransaction);
    }
  }
  await client.query('update webhook_endpoint set disabled_at = null');
  return { none: median(times.none), three: median(times.three) };
}

export async function burst(): Promise<void> {
  await withScratchDatabase('webhooks', 10, async (orm, url) => {
    const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, () => new Receiver().start()));
    const clients = [new Client({ connectionString: url }), new Client({ connectionString: url })];
    for (const c of clients) await c.connect();
    const [client] = clients;
    try {
      const { rows } = await client.query<{ id: string }>(`select d.id from document d join template t on t.id = d.template_id
        join project p on p.id = t.project_id where p.organization_id = $1 order by d.id`, [DEMO_IDS.organizations.atelierDemo]);
      const documents = rows.map((r) => r.id);
      const writers = await Promise.all(clients.map((c) => new Writer(c, documents).init()));
      const [writer] = writers;
      console.log(`webhooks: ${rows.length} documents of Atelier Demo; ${ENDPOINTS} endpoints for contractor.answered; `
        + `${TRANSACTIONS} transactions of ${PER_TRANSACTION} versions`);
      const burst: Workload = { label: `${TRANSACTIONS} x ${PER_TRANSACTION} versions, back to back`, steps: TRANSACTIONS, perTransaction: PER_TRANSACTION, gapMs: 0 };

      // Delivery, unthrottled.
      const delivered: Delivered[] = [];
      let server = await benchServer(orm, url, FAST);
      try {
        for (const r of receivers) await createEndpoint(server, r);
        await deliver({ label: 'warm-up', steps: 2, perTransaction: PER_TRANSACTION, gapMs: 0 }, [writer], receivers);
        if (UNANALYZED) delivered.push(await deliver({ ...burst, label: `${burst.label}, webhook tables never analyzed` }, [writer], receivers));
        await client.query(ANALYZE);
        delivered.push(await deliver(burst, [writer], receivers));
        if (PACED) delivered.push(await deliver({ label: `${PACED} x ${PER_TRANSACTION} versions, one every ${PACED_GAP_MS} ms`, steps: PACED, perTransaction: PER_TRANSACTION, gapMs: PACED_GAP_MS }, [writer], receivers));
        if (PAIRS) delivered.push(await deliver({ label: `${PAIRS} x 2 writers at once, 1 version each, every ${PAIRS_GAP_MS} ms`, steps: PAIRS, perTransaction: 1, gapMs: PAIRS_GAP_MS }, writers, receivers));
      } finally {
        await server.close();
      }

      // Write cost, the service stopped: no endpoint enabled anywhere against the three, block by block.
      const kinds: Record<string, { blocks: number; perBlock: number; perTransaction: number }> = {
        [`${TRANSACTIONS} x ${PER_TRANSACTION} versions (one INSERT each)`]: { blocks: 10, perBlock: TRANSACTIONS / 10, perTransaction: PER_TRANSACTION },
        [`${SINGLE} x 1 version`]: { blocks: 10, perBlock: SINGLE / 10, perTransaction: 1 },
      };
      const cost: Record<string, { none: number[]; three: number[] }> = Object.fromEntries(Object.keys(kinds).map((k) => [k, { none: [], three: [] }]));
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [kind, { blocks, perBlock, perTransaction }] of Object.entries(kinds)) {
          const { none, three } = await writeCost(writer, blocks, perBlock, perTransaction);
          cost[kind].none.push(none);
          cost[kind].three.push(three);
          console.log(`webhooks: write cost round ${round}, ${kind}: no endpoint ${none.toFixed(0)} µs/version, three endpoints ${three.toFixed(0)} µs/version`);
        }
      }
      await client.query(EMPTY_OUTBOX);

      // The default pace: WEBHOOK_MAX_ATTEMPTS_PER_SECOND=100 per organization and instance.
      if (THROTTLED) {
        server = await benchServer(orm, url);
        try {
          delivered.push(await deliver({ label: `${THROTTLED} x ${PER_TRANSACTION} versions, default WEBHOOK_MAX_ATTEMPTS_PER_SECOND (100)`, steps: THROTTLED, perTransaction: PER_TRANSACTION, gapMs: 0 }, [writer], receivers));
        } finally {
          await server.close();
        }
      }

      const ms = (v: number) => (v >= 10000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
      console.log(`\n| delivery to ${ENDPOINTS} endpoints | deliveries | commit → receipt p50 | p99 | max | first commit → all received | attempts/s | duplicates | attempts recorded | of which unsuccessful | signatures verified |`);
      console.log('|---|---|---|---|---|---|---|---|---|---|---|');
      for (const d of delivered) {
        console.log(`| ${d.label} | ${d.deliveries} | ${ms(d.p50)} | ${ms(d.p99)} | ${ms(d.max)} | ${(d.totalMs / 1000).toFixed(2)} s | ${d.attemptsPerSecond.toFixed(0)} | ${d.duplicates} | ${d.attemptRows} | ${d.unsuccessful} | ${d.verified} |`);
      }
      if (ROUNDS) {
        console.log(`\n| write (service stopped), median transaction, median of ${ROUNDS} rounds | no endpoint enabled | ${ENDPOINTS} endpoints | added by the outbox |\n|---|---|---|---|`);
        for (const [kind, { none, three }] of Object.entries(cost)) {
          const added = median(three) - median(none);
          console.log(`| ${kind} | ${median(none).toFixed(0)} µs/version | ${median(three).toFixed(0)} µs/version | ${added >= 0 ? '+' : ''}${added.toFixed(0)} µs/version |`);
        }
      }
    } finally {
      for (const c of clients) await c.end();
      await Promise.all(receivers.map((r) => r.close()));
    }
  });
}
