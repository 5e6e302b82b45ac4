import { randomUUID } from 'node:crypto';
import { queryRows } from './databases';

/**
 * A load of REST and GraphQL reads and writes against a running service, for topology tests that switch, kill or
 * fence its database under it (test/topology.failover.test.ts): every answer is recorded with its timing and judged
 * against the rule of docs/faults.md (2xx, or 503 + Retry-After in the endpoint's shape; never a 500).
 *
 * Writes create trades named after their `Idempotency-Key` (`<prefix>-<n>`) and are retried with the same key and
 * body, as a careful client does, until acknowledged (2xx): so that after the fault the database can be asked
 * whether every acknowledged write is there exactly once.
 */

type LoadKind = 'rest-read' | 'rest-write' | 'graphql-query' | 'graphql-mutation';

/** How an answer stands against the rule. */
type Verdict =
  /** 2xx (GraphQL: without errors). */
  | 'ok'
  /** 503 with Retry-After in the endpoint's shape (REST `{code: 503, message}`, GraphQL SERVICE_UNAVAILABLE only). */
  | 'retry-later'
  /** 409 + Retry-After to a retry whose first request may still run (README "Retrying writes"): retry-later too. */
  | 'key-in-use'
  /** Anything else: a 500, a 503 without Retry-After or in another shape, GraphQL errors with 200, no answer. */
  | 'wrong';

export interface LoadAnswer {
  kind: LoadKind;
  /** HTTP status; 0 when no answer came (a transport error or the client's timeout). */
  status: number;
  verdict: Verdict;
  retryAfter: string | null;
  /** REST `message`, or the GraphQL errors' codes and first message; the transport error. */
  detail: string;
  key?: string;
  /** Attempt number of this key (1 = first). */
  attempt?: number;
  startedAt: number;
  endedAt: number;
}

interface WriteOutcome {
  key: string;
  kind: 'rest-write' | 'graphql-mutation';
  acknowledged: boolean;
  attempts: number;
  /** When the acknowledging answer came. */
  ackAt?: number;
  /** The trade id the acknowledging answer named. */
  tradeId?: string;
}

export interface LoadOptions {
  baseUrl: string;
  token: string;
  projectId: string;
  /** Prefix of the keys and trade names of this load (unique per scenario). */
  prefix: string;
  /** Closed-loop workers per kind (default 2 each). */
  workers?: Partial<Record<LoadKind, number>>;
  /** Pause before a retry of a write (default 150 ms; Retry-After is not honoured, so that recovery is seen). */
  retryDelayMs?: number;
  /** A request with no answer within this is recorded as unanswered (default 20 s). */
  timeoutMs?: number;
  /** After stop(), how long a write keeps retrying its key to reach a definite outcome (default 15 s). */
  drainMs?: number;
}

export interface LoadSummary {
  requests: number;
  /** `<kind> <status>` (GraphQL errors with 200 as `<kind> 200+errors`, no answer as `<kind> none`) -> count. */
  byStatus: Record<string, number>;
  wrong: LoadAnswer[];
  /** Longest time a request took to be refused (503 / 409). */
  longestRefusalMs: number;
  /** Longest time between two acknowledged writes. */
  longestWriteGapMs: number;
  writes: { keys: number; acknowledged: number; notAcknowledged: number };
}

export interface Load {
  answers: LoadAnswer[];
  writes: Map<string, WriteOutcome>;
  /** Ends the load: reads stop, writes settle their current key (acknowledged or given up after drainMs). */
  stop(): Promise<void>;
  summary(): LoadSummary;
  /** The first write acknowledged at or after `at` (its answer's end), or null. */
  firstAckAfter(at: number): number | null;
  /** Keys of writes acknowledged. */
  acknowledgedKeys(): string[];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The bounds every fault test runs the service with: short connect and readiness bounds, a fast heartbeat. */
export const FAULT_ENV = {
  LOG_LEVEL: 'info',
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
  READINESS_TIMEOUT_MS: '1000',
  LISTENER_HEARTBEAT_INTERVAL_MS: '500',
  LISTENER_HEARTBEAT_TIMEOUT_MS: '1000',
};

/** The GraphQL write the fault tests send. */
export const CREATE_TRADE = 'mutation($p: ID!, $i: CreateProjectTradeInput!) { createProjectTrade(projectId: $p, input: $i) { trade { id } } }';

interface Sent {
  status: number;
  retryAfter: string | null;
  body: unknown;
  error?: string;
}

async function send(url: string, init: RequestInit, timeoutMs: number): Promise<Sent> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch { /* not JSON */ }
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { status: 0, retryAfter: null, body: null, error: `${e.name}: ${e.cause?.code ?? ''} ${e.cause?.message ?? e.message}`.trim() };
  }
}

/** Judges one answer of `kind` against the rule. */
function judge(kind: LoadKind, sent: Sent, retried: boolean): { verdict: Verdict; detail: string } {
  if (sent.status === 0) return { verdict: 'wrong', detail: sent.error ?? 'no answer' };
  const graphql = kind === 'graphql-query' || kind === 'graphql-mutation';
  const body = sent.body as { errors?: Array<{ message: string; extensions?: { code?: string } }>; code?: number; message?: string } | null;
  const retryAfterOk = !!sent.retryAfter && /^[1-9]\d*$/.test(sent.retryAfter);
  if (graphql) {
    const errors = body && typeof body === 'object' && Array.isArray(body.errors) ? body.errors : null;
    const detail = errors ? `${errors.map((e) => e.extensions?.code).join(',')}: ${errors[0]?.message}` : '';
    if (sent.status === 200 && !errors) return { verdict: 'ok', detail };
    if (sent.status === 503 && retryAfterOk && errors?.length && errors.every((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE')) return { verdict: 'retry-later', detail };
    if (sent.status === 409 && retried && retryAfterOk) return { verdict: 'key-in-use', detail };
    return { verdict: 'wrong', detail: detail || JSON.stringify(body).slice(0, 300) };
  }
  const detail = body && typeof body === 'object' && typeof body.message === 'string' ? body.message : String(JSON.stringify(body)).slice(0, 300);
  if (sent.status >= 200 && sent.status < 300) return { verdict: 'ok', detail: '' };
  if (sent.status === 503 && retryAfterOk && body && body.code === 503 && typeof body.message === 'string') return { verdict: 'retry-later', detail };
  if (sent.status === 409 && retried && retryAfterOk) return { verdict: 'key-in-use', detail };
  return { verdict: 'wrong', detail };
}

const PROJECT_TRADES = 'query($id: ID!) { project(id: $id) { id trades { id name } } }';

export function startLoad(opts: LoadOptions): Load {
  const timeoutMs = opts.timeoutMs ?? 20000;
  const retryDelayMs = opts.retryDelayMs ?? 150;
  const drainMs = opts.drainMs ?? 15000;
  const workers = { 'rest-read': 2, 'rest-write': 2, 'graphql-query': 2, 'graphql-mutation': 2, ...opts.workers };
  const answers: LoadAnswer[] = [];
  const writes = new Map<string, WriteOutcome>();
  const auth = { Authorization: `Bearer ${opts.token}` };
  let running = true;
  let stoppedAt = Infinity;
  let n = 0;

  const record = (kind: LoadKind, sent: Sent, startedAt: number, key?: string, attempt?: number) => {
    const { verdict, detail } = judge(kind, sent, (attempt ?? 1) > 1);
    const answer: LoadAnswer = { kind, status: sent.status, verdict, retryAfter: sent.retryAfter, detail, key, attempt, startedAt, endedAt: Date.now() };
    answers.push(answer);
    return answer;
  };

  const read = async (kind: 'rest-read' | 'graphql-query') => {
    while (running) {
      const startedAt = Date.now();
      const sent = kind === 'rest-read'
        ? await send(`${opts.baseUrl}/api/svc/v1/projects/${opts.projectId}/trades`, { headers: auth }, timeoutMs)
        : await send(`${opts.baseUrl}/graphql`, {
          method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ query: PROJECT_TRADES, variables: { id: opts.projectId } }),
        }, timeoutMs);
      const answer = record(kind, sent, startedAt);
      if (answer.verdict !== 'ok') await sleep(retryDelayMs);
    }
  };

  const write = async (kind: 'rest-write' | 'graphql-mutation') => {
    while (running) {
      const key = `${opts.prefix}-${++n}-${randomUUID().slice(0, 8)}`;
      const outcome: WriteOutcome = { key, kind, acknowledged: false, attempts: 0 };
      writes.set(key, outcome);
      const headers = { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': key };
      const [url, body] = kind === 'rest-write'
        ? [`${opts.baseUrl}/api/svc/v1/projects/${opts.projectId}/trades`, JSON.stringify({ name: key, number: '77', short_name: 'FO' })]
        : [`${opts.baseUrl}/graphql`, JSON.stringify({ query: CREATE_TRADE, variables: { p: opts.projectId, i: { name: key, number: '78', shortName: 'FG' } } })];
      for (;;) {
        const startedAt = Date.now();
        outcome.attempts++;
        const sent = await send(url, { method: 'POST', headers, body }, timeoutMs);
        const answer = record(kind, sent, startedAt, key, outcome.attempts);
        if (answer.verdict === 'ok') {
          const b = sent.body as { trade?: { id: string }; data?: { createProjectTrade: { trade: { id: string } } } };
          Object.assign(outcome, { acknowledged: true, ackAt: answer.endedAt, tradeId: b.trade?.id ?? b.data?.createProjectTrade.trade.id });
          break;
        }
        // A refusal of the request itself (4xx other than 409) will not change: give the key up.
        if (sent.status >= 400 && sent.status < 500 && sent.status !== 409) break;
        if (Date.now() > stoppedAt + drainMs) break;
        await sleep(retryDelayMs);
      }
    }
  };

  const all = Promise.all((Object.entries(workers) as Array<[LoadKind, number]>).flatMap(([kind, count]) => Array.from({ length: count }, () => (
    kind === 'rest-read' || kind === 'graphql-query' ? read(kind) : write(kind)))));

  return {
    answers,
    writes,
    async stop() {
      running = false;
      stoppedAt = Date.now();
      await all;
    },
    summary() {
      const byStatus: Record<string, number> = {};
      for (const a of answers) {
        const label = `${a.kind} ${a.status === 0 ? 'none' : a.status}${a.status === 200 && a.verdict === 'wrong' ? '+errors' : ''}`;
        byStatus[label] = (byStatus[label] ?? 0) + 1;
      }
      const acks = [...writes.values()].filter((w) => w.acknowledged).map((w) => w.ackAt!).sort((x, y) => x - y);
      let gap = 0;
      for (let i = 1; i < acks.length; i++) gap = Math.max(gap, acks[i] - acks[i - 1]);
      const refusals = answers.filter((a) => a.verdict === 'retry-later' || a.verdict === 'key-in-use');
      return {
        requests: answers.length,
        byStatus: Object.fromEntries(Object.entries(byStatus).sort()),
        wrong: answers.filter((a) => a.verdict === 'wrong'),
        longestRefusalMs: refusals.reduce((m, a) => Math.max(m, a.endedAt - a.startedAt), 0),
        longestWriteGapMs: gap,
        writes: { keys: writes.size, acknowledged: acks.length, notAcknowledged: writes.size - acks.length },
      };
    },
    firstAckAfter(at) {
      const acks = [...writes.values()].filter((w) => w.acknowledged && w.ackAt! >= at).map((w) => w.ackAt!);
      return acks.length ? Math.min(...acks) : null;
    },
    acknowledgedKeys() {
      return [...writes.values()].filter((w) => w.acknowledged).map((w) => w.key);
    },
  };
}

/** The wrong answers grouped `<kind> <status> <detail>` -> count, for a readable failure. */
export function groupWrong(wrong: LoadAnswer[]): Record<string, number> {
  const groups: Record<string, number> = {};
  for (const a of wrong) {
    const label = `${a.kind} ${a.status || 'none'} ${a.detail.slice(0, 160)}`;
    groups[label] = (groups[label] ?? 0) + 1;
  }
  return groups;
}

export interface WriteAudit {
  acknowledged: number;
  /** Acknowledged (2xx) writes whose trade is not in the database. */
  lost: string[];
  /** Keys stored more than once. */
  duplicated: string[];
  /** Writes never acknowledged that are stored all the same (a COMMIT whose answer was lost: allowed, once). */
  storedUnacknowledged: number;
  notAcknowledged: number;
}

/** What of the load's writes `databaseUrl` (the new primary) holds, by Idempotency-Key (= trade name). */
export async function auditWrites(load: Load, databaseUrl: string, prefix: string): Promise<WriteAudit> {
  const rows = await queryRows<{ name: string; n: number }>(databaseUrl,
    "select name, count(*)::int as n from project_trade where name like $1 || '-%' group by name", [prefix]);
  const stored = new Map(rows.map((r) => [r.name, r.n]));
  const all = [...load.writes.values()];
  return {
    acknowledged: all.filter((w) => w.acknowledged).length,
    lost: all.filter((w) => w.acknowledged && !stored.has(w.key)).map((w) => w.key),
    duplicated: rows.filter((r) => r.n > 1).map((r) => r.name),
    storedUnacknowledged: all.filter((w) => !w.acknowledged && stored.has(w.key)).length,
    notAcknowledged: all.filter((w) => !w.acknowledged).length,
  };
}
