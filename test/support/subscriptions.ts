import type { FormattedExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** Far above any delivery (a coalescing window, a few statements): only a test that is failing waits this long. */
const HANG_MS = 10000;

/** How a socket ended: its close code and reason. */
interface Closed {
  code: number;
  reason: string;
}

export interface TestWsClient {
  client: Client;
  /** Resolves when the server acknowledged `connection_init`. */
  connected: Promise<void>;
  /** Resolves with the first close of the socket. */
  closed: Promise<Closed>;
  dispose(): Promise<void>;
}

/**
 * A real graphql-ws client (the protocol Apollo Client's GraphQLWsLink speaks) on a test server's /graphql, the
 * token in `connection_init` as `Authorization: Bearer`. It never retries: each test sees exactly what the server did.
 */
export function wsClient(baseUrl: string, token: string | null, params: Record<string, unknown> = token ? { Authorization: `Bearer ${token}` } : {}): TestWsClient {
  let onConnected!: () => void;
  let onClosed!: (closed: Closed) => void;
  const connected = new Promise<void>((resolve) => { onConnected = resolve; });
  const closed = new Promise<Closed>((resolve) => { onClosed = resolve; });
  const client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: params,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => undefined,
    on: {
      connected: () => onConnected(),
      closed: (event) => {
        const e = event as { code: number; reason: string };
        onClosed({ code: e.code, reason: String(e.reason) });
      },
    },
  });
  return { client, connected, closed, dispose: () => client.dispose() as Promise<void> };
}

/** What a subscription received, in order. */
export interface TestSubscription<T = Record<string, unknown>> {
  results: Array<FormattedExecutionResult<T, unknown>>;
  /** The next result not yet taken (waits for it); fails after HANG_MS. */
  next(): Promise<FormattedExecutionResult<T, unknown>>;
  /** Resolves with the error (an `error` message, a close) or null once the subscription completed. */
  ended: Promise<unknown>;
  stop(): void;
}

/** Starts a subscription and records everything it receives. */
export function subscribe<T = Record<string, unknown>>(client: Client, query: string, variables?: Record<string, unknown>): TestSubscription<T> {
  const results: Array<FormattedExecutionResult<T, unknown>> = [];
  let taken = 0;
  let wake: (() => void) | null = null;
  let onEnded!: (e: unknown) => void;
  const ended = new Promise<unknown>((resolve) => { onEnded = resolve; });
  const stop = client.subscribe<T>({ query, variables }, {
    next: (result) => {
      results.push(result);
      wake?.();
    },
    error: (err) => {
      onEnded(err);
      wake?.();
    },
    complete: () => {
      onEnded(null);
      wake?.();
    },
  });
  return {
    results,
    ended,
    stop,
    async next() {
      const deadline = Date.now() + HANG_MS;
      while (results.length <= taken) {
        if (Date.now() > deadline) throw new Error(`no update within ${HANG_MS} ms (received ${results.length})`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
        wake = null;
      }
      return results[taken++];
    },
  };
}

/** Waits until `check` holds, polling; fails after HANG_MS. For states the server reaches asynchronously. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + HANG_MS;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${HANG_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
