import { performance } from 'node:perf_hooks';
import { Client } from 'pg';

/**
 * The writers of bench/write-ceiling.bench.ts and bench/fanout.bench.ts, in a process of their own so that the measuring
 * process (lock sampler, webhook receiver, subscribers) and the writers do not share an event loop, and so that the
 * writers' CPU time is theirs alone (process.cpuUsage over the measured window).
 *
 * Driven over IPC: `{ cmd: 'run', job }` → connects one plain `pg` client per writer (each its own connection, as the
 * contractor portal's), reads the next version number of each of its documents, answers `ready`; `{ cmd: 'go' }` →
 * every writer inserts ANSWERED versions, one version per transaction (one autocommit INSERT), for `seconds`, round robin
 * over its own documents (no two writers ever touch the same document, template or project), then answers `done` with
 * its figures and closes its connections once told `close`. Without `ratePerSecond` each writer writes in a closed loop
 * (the next INSERT as soon as the last one is answered: the ceiling); with it, at that rate in all: writer i of W starts
 * its k-th INSERT at (k + i / W) x W / rate seconds after `go` (the writers staggered), or as soon as its previous one
 * is answered when that comes later, so that a writer held back catches up and the rate offered is the same whatever
 * the server's speed, as long as it can take it (`elapsedMs` and `commits` say what it did).
 */

export interface WritersJob {
  url: string;
  seconds: number;
  /** Per writer: its documents, in the order it writes them. */
  documents: string[][];
  /** Documents whose commits are timed for the commit-to-subscriber latency. */
  watched: string[];
  /** Commits per second of all writers together; absent: a closed loop. */
  ratePerSecond?: number;
  /** The connections' application_name (default `write-ceiling writer`). */
  applicationName?: string;
  /** Every commit's document, version and time in `WritersResult.commitTimes` (bench/webhooks-throughput.ts). */
  recordCommits?: boolean;
}

export interface WritersResult {
  commits: number;
  errors: number;
  firstError: string | null;
  /** From `go` to the last writer's stop, ms. */
  elapsedMs: number;
  /** CPU of this process over that window (user + system), ms. */
  cpuMs: number;
  /** Commits per writer (min, max): no writer starved. */
  perWriterMin: number;
  perWriterMax: number;
  /** Round trip of the INSERT (it is the transaction), ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Commits of watched documents: [documentId, commit time on the epoch clock in ms (performance.timeOrigin based)]. */
  watchedCommits: Array<[string, number]>;
  /** With `recordCommits`: every commit, [documentId, version, commit time on the epoch clock in ms]. */
  commitTimes?: Array<[string, number, number]>;
}

const INSERT = `insert into document_version (id, created_at, updated_at, document_id, version, status, sub_total, discount, sent_at)
  values (gen_random_uuid(), now(), now(), $1, $2, 'ANSWERED', $3, 0, now())`;

/** Wall clock on the epoch with sub-millisecond resolution, comparable between processes of this machine. */
const epochMs = () => performance.timeOrigin + performance.now();

const quantile = (sorted: Float64Array, q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);

let clients: Client[] = [];

async function prepare(job: WritersJob): Promise<Array<{ client: Client; documents: string[]; next: Map<string, number> }>> {
  clients = job.documents.map(() => new Client({ connectionString: job.url, application_name: job.applicationName ?? 'write-ceiling writer' }));
  await Promise.all(clients.map((c) => c.connect()));
  return Promise.all(job.documents.map(async (documents, i) => {
    const { rows } = await clients[i].query<{ id: string; max: number }>(`select d.id, coalesce(max(v.version), 0)::int as max
      from document d left join document_version v on v.document_id = d.id where d.id = any($1::uuid[]) group by d.id`, [documents]);
    return { client: clients[i], documents, next: new Map(rows.map((r) => [r.id, r.max + 1])) };
  }));
}

async function write(job: WritersJob, writers: Awaited<ReturnType<typeof prepare>>): Promise<WritersResult> {
  const watched = new Set(job.watched);
  const watchedCommits: Array<[string, number]> = [];
  const commitTimes: Array<[string, number, number]> | undefined = job.recordCommits ? [] : undefined;
  const durations: number[] = [];
  const perWriter = writers.map(() => 0);
  let errors = 0;
  let firstError: string | null = null;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + job.seconds * 1000;
  /** Between two INSERTs of one writer when paced, ms. */
  const interval = job.ratePerSecond ? (writers.length * 1000) / job.ratePerSecond : 0;
  await Promise.all(writers.map(async (w, i) => {
    for (let n = 0; performance.now() < deadline; n++) {
      if (interval) {
        const wait = started + (n + i / writers.length) * interval - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (performance.now() >= deadline) break;
      }
      const document = w.documents[n % w.documents.length];
      const version = w.next.get(document)!;
      const t0 = performance.now();
      try {
        await w.client.query({ name: 'write-ceiling-insert', text: INSERT, values: [document, version, 1000 + (version % 9000)] });
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
        continue;
      }
      const t1 = performance.now();
      w.next.set(document, version + 1);
      durations.push(t1 - t0);
      perWriter[i]++;
      if (watched.has(document)) watchedCommits.push([document, performance.timeOrigin + t1]);
      commitTimes?.push([document, version, performance.timeOrigin + t1]);
    }
  }));
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const sorted = Float64Array.from(durations).sort();
  return {
    commits: durations.length, errors, firstError, elapsedMs, cpuMs: (used.user + used.system) / 1000,
    perWriterMin: Math.min(...perWriter), perWriterMax: Math.max(...perWriter),
    p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), maxMs: sorted.length ? sorted[sorted.length - 1] : 0,
    watchedCommits, commitTimes,
  };
}

let job: WritersJob | null = null;
let writers: Awaited<ReturnType<typeof prepare>> | null = null;

process.on('message', (message: { cmd: string; job?: WritersJob }) => {
  void (async () => {
    try {
      if (message.cmd === 'run') {
        job = message.job!;
        writers = await prepare(job);
        process.send!({ cmd: 'ready', at: epochMs() });
      } else if (message.cmd === 'go') {
        process.send!({ cmd: 'done', result: await write(job!, writers!) });
      } else if (message.cmd === 'close') {
        await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
        clients = [];
        process.send!({ cmd: 'closed' });
      } else if (message.cmd === 'exit') {
        process.exit(0);
      }
    } catch (err) {
      process.send!({ cmd: 'failed', error: (err as Error).stack ?? String(err) });
    }
  })();
});
