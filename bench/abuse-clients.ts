import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The hostile caller of bench/abuse.bench.ts, in a process of its own (forked, results over IPC) so that the server
 * under test is measured, not the load generator. Two jobs:
 *
 * - `flood`: `count` POST /graphql, `concurrency` at a time, each body different: `{ me { id } } # <comment>` with a
 *   new random printable comment of `commentBytes` (no newline), or `template` with every `{{N}}` replaced by the
 *   request's number. Stops sending at the first refused connection (the server is gone), or after `maxSeconds`.
 * - `fairness`: `clientsA` closed-loop clients of caller A resending `document`, and `clientsB` of caller B
 *   alternating `{ __typename }` and `{ me { id } }`, each client on a keep-alive connection of its own, for `seconds`.
 *
 * Every request is bounded by `timeoutMs` (then counted as "timeout"). The job comes from the parent as `{ job }`;
 * progress goes back as `{ progress }` messages, the result as `{ result }`.
 */
export interface FloodJob {
  kind: 'flood';
  url: string;
  token: string;
  count: number;
  concurrency: number;
  commentBytes?: number;
  template?: string;
  variables?: Record<string, unknown>;
  timeoutMs: number;
  maxSeconds: number;
  progressEvery: number;
}

export interface FairnessJob {
  kind: 'fairness';
  url: string;
  tokenA: string;
  tokenB: string;
  document: string;
  clientsA: number;
  clientsB: number;
  seconds: number;
  timeoutMs: number;
}

export interface FloodResult {
  sent: number;
  byStatus: Record<string, number>;
  /** Answers 200 whose body holds `errors`. */
  okWithErrors: number;
  firstError: string | null;
  /**
   * The first request that lost its connection (reset or refused: the server gone, when it exited), with the
   * answers received and the requests sent by then.
   */
  failure: { request: number; answered: number; sent: number } | null;
  elapsedMs: number;
  stoppedBy: 'done' | 'server gone' | 'time';
}

export interface Latencies { n: number; p50: number; p99: number; max: number }

export interface FairnessResult {
  A: { byStatus: Record<string, number>; ok: Latencies; refused: Latencies; refusedWithRetryAfter: number; okWithErrors: number; firstError: string | null };
  B: { byStatus: Record<string, number>; all: Latencies; ok: Latencies; refused: Latencies; okWithErrors: number; firstError: string | null };
  elapsedMs: number;
}

export interface Answer { status: number; ms: number; bytes: number; head: string; tail: string; retryAfter: boolean; error?: string }

const KEEP = 400;

/** One POST /graphql; never rejects (status 0 and `error` when no HTTP answer came). */
export function post(url: string, token: string, body: string, agent: http.Agent | false, timeoutMs: number): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...a, ms: performance.now() - started });
    };
    const req = http.request(`${url}/graphql`, {
      method: 'POST', agent,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      let head = '';
      let tail = '';
      let bytes = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        bytes += chunk.length;
        if (head.length < KEEP) head += chunk.slice(0, KEEP - head.length);
        tail = (tail + chunk).slice(-KEEP);
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, bytes, head, tail, retryAfter: res.headers['retry-after'] !== undefined }));
      res.on('error', (err) => done({ status: 0, bytes, head, tail, retryAfter: false, error: err.message }));
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy(new Error(`timeout after ${timeoutMs} ms`));
    });
    req.on('error', (err: NodeJS.ErrnoException) => done({ status: 0, bytes: 0, head: '', tail: '', retryAfter: false, error: err.code ?? err.message }));
    req.end(body);
  });
}

/** Whether a GraphQL answer's body holds errors (looked for at both ends: Apollo writes them first or last). */
export const hasErrors = (a: { head: string; tail: string }) => a.head.includes('"errors":') || a.tail.includes('"errors":');

/** The message of an answer that is not a clean 200, for a report. */
function describe(a: Answer): string {
  if (a.status === 0) return `no answer: ${a.error}`;
  const message = /"message":"((?:[^"\\]|\\.)*)"/.exec(a.head)?.[1];
  return `${a.status}: ${message ?? a.head.slice(0, 200)}`;
}

/** A comment of `bytes` random printable ASCII characters (32-126, no newline). */
function randomComment(bytes: number): string {
  const buffer = randomBytes(bytes);
  for (let i = 0; i < buffer.length; i++) buffer[i] = 32 + (buffer[i] % 95);
  return buffer.toString('latin1');
}

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);

export function latencies(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? 0 };
}

async function flood(job: FloodJob): Promise<FloodResult> {
  const started = performance.now();
  const deadline = started + job.maxSeconds * 1000;
  const byStatus: Record<string, number> = {};
  let next = 0;
  let answered = 0;
  let okWithErrors = 0;
  let firstError: string | null = null;
  let failure: FloodResult['failure'] = null;
  let gone = false;
  let stoppedBy: FloodResult['stoppedBy'] = 'done';
  const body = (n: number) => (job.template !== undefined
    ? JSON.stringify({ query: job.template.replaceAll('{{N}}', String(n)), variables: job.variables })
    : JSON.stringify({ query: `{ me { id } } # ${randomComment(job.commentBytes ?? 1_000_000)}` }));
  await Promise.all(Array.from({ length: job.concurrency }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (next < job.count && !gone) {
        if (performance.now() > deadline) {
          stoppedBy = 'time';
          break;
        }
        const n = ++next;
        const a = await post(job.url, job.token, body(n), agent, job.timeoutMs);
        const key = a.status === 0 ? (a.error?.startsWith('timeout') ? 'timeout' : `no answer (${a.error})`) : String(a.status);
        byStatus[key] = (byStatus[key] ?? 0) + 1;
        if (a.status === 0 && (a.error === 'ECONNREFUSED' || a.error === 'ECONNRESET' || a.error === 'EPIPE')) {
          failure ??= { request: n, answered, sent: next };
          // A refused connection is a server gone; a reset one may be, the next request tells.
          if (a.error === 'ECONNREFUSED') {
            gone = true;
            stoppedBy = 'server gone';
          }
        } else if (a.status !== 0) {
          answered++;
        }
        if (a.status === 200 && hasErrors(a)) okWithErrors++;
        if ((a.status !== 200 || hasErrors(a)) && firstError === null) firstError = `request ${n}: ${describe(a)}`;
        if (answered % job.progressEvery === 0 && a.status !== 0) process.send?.({ progress: { answered, sent: next, elapsedMs: performance.now() - started } });
      }
    } finally {
      agent.destroy();
    }
  }));
  return { sent: next, byStatus, okWithErrors, firstError, failure, elapsedMs: performance.now() - started, stoppedBy };
}

async function fairness(job: FairnessJob): Promise<FairnessResult> {
  const started = performance.now();
  const deadline = started + job.seconds * 1000;
  const A = { byStatus: {} as Record<string, number>, ok: [] as number[], refused: [] as number[], refusedWithRetryAfter: 0, okWithErrors: 0, firstError: null as string | null };
  const B = { byStatus: {} as Record<string, number>, all: [] as number[], ok: [] as number[], refused: [] as number[], okWithErrors: 0, firstError: null as string | null };
  const bodyA = JSON.stringify({ query: job.document });
  const bodiesB = [JSON.stringify({ query: '{ __typename }' }), JSON.stringify({ query: '{ me { id } }' })];
  const key = (a: Answer) => (a.status === 0 ? (a.error?.startsWith('timeout') ? 'timeout' : 'no answer') : String(a.status));
  const clientA = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (performance.now() < deadline) {
        const a = await post(job.url, job.tokenA, bodyA, agent, job.timeoutMs);
        A.byStatus[key(a)] = (A.byStatus[key(a)] ?? 0) + 1;
        if (a.status === 200 && !hasErrors(a)) A.ok.push(a.ms);
        else if (a.status === 429 || a.status === 503) {
          A.refused.push(a.ms);
          if (a.retryAfter) A.refusedWithRetryAfter++;
        } else {
          if (a.status === 200) A.okWithErrors++;
          A.firstError ??= describe(a);
        }
        // A server gone: no tight loop of refused connections.
        if (a.status === 0) await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      agent.destroy();
    }
  };
  const clientB = async (i: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let n = i; performance.now() < deadline; n++) {
        const a = await post(job.url, job.tokenB, bodiesB[n % 2], agent, job.timeoutMs);
        B.byStatus[key(a)] = (B.byStatus[key(a)] ?? 0) + 1;
        B.all.push(a.ms);
        if (a.status === 200 && !hasErrors(a)) B.ok.push(a.ms);
        else if (a.status === 429 || a.status === 503) B.refused.push(a.ms);
        else {
          if (a.status === 200) B.okWithErrors++;
          B.firstError ??= describe(a);
        }
        if (a.status === 0) await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all([
    ...Array.from({ length: job.clientsA }, clientA),
    ...Array.from({ length: job.clientsB }, (_, i) => clientB(i)),
  ]);
  return {
    A: { byStatus: A.byStatus, ok: latencies(A.ok), refused: latencies(A.refused), refusedWithRetryAfter: A.refusedWithRetryAfter, okWithErrors: A.okWithErrors, firstError: A.firstError },
    B: { byStatus: B.byStatus, all: latencies(B.all), ok: latencies(B.ok), refused: latencies(B.refused), okWithErrors: B.okWithErrors, firstError: B.firstError },
    elapsedMs: performance.now() - started,
  };
}

async function main(job: FloodJob | FairnessJob): Promise<void> {
  const result = job.kind === 'flood' ? await flood(job) : await fairness(job);
  process.send!({ result }, () => process.disconnect());
}

// The job comes over IPC (a document may be larger than a command line's argument may be).
if (require.main === module) {
  process.once('message', (message: { job: FloodJob | FairnessJob }) => {
    main(message.job).catch((err) => {
      console.error(err);
      process.exitCode = 1;
      process.disconnect();
    });
  });
}
