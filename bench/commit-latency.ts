import { performance } from 'node:perf_hooks';
import { createClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';

// Commit to subscriber, as bench/write-ceiling.bench.ts and bench/fanout.bench.ts measure it: a graphql-ws subscriber
// that records when each update arrives and the documents it names, and the matching of those arrivals with the
// writers' commits (bench/write-ceiling-writers.ts times each COMMIT on the same clock).

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Wall clock on the epoch with sub-millisecond resolution, comparable between processes of this machine. */
export const epochMs = () => performance.timeOrigin + performance.now();

/** The middle value; the mean of the two middle ones for an even count. */
export function median(values: readonly number[]): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export interface Update {
  at: number;
  projectId: string;
  documentIds: string[];
  /** The update's kinds, when the subscription selects `changes`. */
  changes?: string[];
}

interface ProjectChange {
  projectId: string;
  documentIds: string[];
  changes?: string[];
}

/**
 * One graphql-ws connection with one `projectChanged` subscription; `query` selects at least `projectId` and
 * `documentIds` with the projects as `$ids`. Errors are kept, not thrown: a bench reports them.
 */
export class Subscriber {
  readonly updates: Update[] = [];
  errors: string[] = [];
  private client: WsClient | null = null;

  /** `bench` names the bench in errors. */
  constructor(private readonly bench: string, private readonly query: string) {}

  async start(baseUrl: string, token: string, projectIds: string[]): Promise<void> {
    let connected!: () => void;
    const ready = new Promise<void>((resolve) => { connected = resolve; });
    this.client = createClient({
      url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${token}` },
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: (err) => { this.errors.push(String(err)); },
      on: { connected: () => connected() },
    });
    this.client.subscribe<{ projectChanged: ProjectChange }>({ query: this.query, variables: { ids: projectIds } }, {
      next: (result) => {
        const at = epochMs();
        if (result.errors?.length) this.errors.push(JSON.stringify(result.errors));
        const change = result.data?.projectChanged;
        if (change) this.updates.push({ at, projectId: change.projectId, documentIds: change.documentIds, ...(change.changes ? { changes: change.changes } : {}) });
      },
      error: (err) => { this.errors.push(err instanceof Error ? err.message : JSON.stringify(err)); },
      complete: () => { this.errors.push('the subscription completed'); },
    });
    await Promise.race([ready, sleep(10000).then(() => { throw new Error(`${this.bench}: the subscriber did not connect within 10 s`); })]);
  }

  async stop(): Promise<void> {
    await this.client?.dispose();
  }
}

/**
 * Commit-to-subscriber latencies: each update's documents matched with their earliest commit not yet matched (every
 * commit of the document up to the update's arrival counts as delivered by it); `unmatched`: commits no update named.
 */
export function match(commits: Array<[string, number]>, updates: Update[]): { latencies: number[]; unmatched: number } {
  const byDocument = new Map<string, number[]>();
  for (const [document, at] of commits) byDocument.set(document, [...(byDocument.get(document) ?? []), at]);
  for (const times of byDocument.values()) times.sort((a, b) => a - b);
  const matched = new Map<string, number>();
  const latencies: number[] = [];
  for (const update of [...updates].sort((a, b) => a.at - b.at)) {
    for (const document of update.documentIds) {
      const times = byDocument.get(document);
      if (!times) continue;
      let i = matched.get(document) ?? 0;
      if (i >= times.length || times[i] > update.at) continue;
      latencies.push(update.at - times[i]);
      while (i < times.length && times[i] <= update.at) i++;
      matched.set(document, i);
    }
  }
  let unmatched = 0;
  for (const [document, times] of byDocument) unmatched += times.length - (matched.get(document) ?? 0);
  return { latencies, unmatched };
}

/**
 * Of the commits `match` leaves unmatched, those an update named within `windowMs` before the COMMIT returned to the
 * writer (its round trip at most): the delivery beat the COMMIT's return to a client held back (a busy machine), which
 * `match` cannot tell from a commit never delivered. Unambiguous while a document is written at most once per window.
 */
export function namedBeforeReturn(commits: Array<[string, number]>, updates: Update[], windowMs: number): number {
  const arrivals = new Map<string, number[]>();
  for (const update of updates) {
    for (const document of update.documentIds) {
      const times = arrivals.get(document);
      if (times) times.push(update.at);
      else arrivals.set(document, [update.at]);
    }
  }
  let early = 0;
  for (const [document, at] of commits) {
    const times = arrivals.get(document) ?? [];
    if (!times.some((t) => t >= at) && times.some((t) => t >= at - windowMs)) early++;
  }
  return early;
}
