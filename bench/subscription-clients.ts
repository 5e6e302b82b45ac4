/**
 * The subscribers of subscriptions.bench.ts, in a process of their own so that the instance's CPU and memory are
 * its own: `count` graphql-ws clients, one connection and one `projectChanged` subscription each, spread over the
 * given projects. For each round the parent announces, it answers once every subscriber has had an update, with
 * the moments they had it (process.hrtime, the machine's monotonic clock, comparable across processes).
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

interface Start {
  url: string;
  token: string;
  projectIds: string[];
  count: number;
  query: string;
}

type FromParent = { type: 'start'; start: Start } | { type: 'stop' };

const clients: Client[] = [];
const pending: Promise<void>[] = [];
let received: bigint[] = [];
let expected = 0;
let errors = 0;

function send(message: unknown): void {
  process.send!(message);
}

/** Connections opened at once: 10,000 at once overflow the listen queue (reset by the kernel, not refused by the service). */
const BATCH = 250;

async function start({ url, token, projectIds, count, query }: Start): Promise<void> {
  expected = count;
  for (let i = 0; i < count; i++) {
    let connected!: () => void;
    const acknowledged = new Promise<void>((resolve) => { connected = resolve; });
    const client = createClient({
      url: `${url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${token}` },
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => undefined,
      on: { connected: () => connected() },
    });
    clients.push(client);
    pending.push(acknowledged);
    if (pending.length >= BATCH) await Promise.all(pending.splice(0));
    client.subscribe({ query, variables: { ids: [projectIds[i % projectIds.length]] } }, {
      next: (result) => {
        if (result.errors) errors++;
        received.push(process.hrtime.bigint());
        if (received.length === expected) {
          send({ type: 'round', times: received.map(String), errors });
          received = [];
          errors = 0;
        }
      },
      error: (err) => send({ type: 'failed', error: String((err as Error)?.message ?? JSON.stringify(err)) }),
      complete: () => undefined,
    });
  }
  send({ type: 'subscribing' });
}

process.on('message', (message: FromParent) => {
  if (message.type === 'start') void start(message.start);
  else {
    Promise.all(clients.map((c) => c.dispose())).finally(() => process.exit(0));
  }
});
