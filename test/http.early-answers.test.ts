import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { LINGER_IDLE_MS, LINGER_MAX_BYTES, LINGER_MAX_MS } from '../src/platform/http/lingering-close';
import { freshDatabase } from './support/app';
import { tokenFor } from './support/auth';
import { startInstanceProcess, type InstanceProcess } from './support/instance-process';

// Answers sent before a request's body is read (413 over the size limit, 401 without a token, 429 out of budget, 431
// from Node's parser) are read by every client, however much of its body it is still sending: the service lingers on
// the connection, reading and discarding, before it closes it, within bounds (docs/faults.md, "Early answers"). Issue 41.

const MB = 1024 * 1024;
const RUNS = 20;
const QUERY = JSON.stringify({ query: '{ me { id } }' });

/** A JSON body of `bytes` bytes: a GraphQL query with a comment of that length. */
const bodyOf = (bytes: number) => Buffer.from(`{"query":"{ me { id } } #${'x'.repeat(bytes - 28)}"}`);

interface Answer { status: number; code: string }
/** The error body's part read: the first error's code. */
interface Payload { errors?: { extensions: { code: string } }[] }

/** Node's http.request: the answer's status and code, or the error that came instead of it. */
function postWithHttp(url: string, body: Buffer, token?: string, headers: Record<string, string> = {}): Promise<Answer | string> {
  return new Promise((resolve) => {
    const req = http.request(`${url}/graphql`, {
      method: 'POST', agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, code: (JSON.parse(text) as Payload).errors?.[0].extensions.code ?? 'none' }));
      res.on('error', (err) => resolve(`response: ${err.message}`));
    });
    // After the answer, a write the service no longer reads may fail: the answer was read, which is what counts.
    req.on('error', (err) => resolve(`request: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    req.end(body);
  });
}

/** Node's fetch (undici). */
async function postWithFetch(url: string, body: Buffer, token?: string, headers: Record<string, string> = {}): Promise<Answer | string> {
  try {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST', body,
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
    });
    return { status: res.status, code: ((await res.json()) as Payload).errors?.[0].extensions.code ?? 'none' };
  } catch (err) {
    const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
    return `fetch: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
  }
}

const CLIENTS = { 'http.request': postWithHttp, fetch: postWithFetch };

interface Sending {
  /** `Connection: close`, or kept alive. */
  close: boolean;
  /** Bytes of each write, and the pause after it (0: as fast as the connection takes them). */
  chunkBytes: number;
  everyMs: number;
  /** Where the client stops sending on its own; then it waits, silent, for thenWaitMs. */
  maxBytes: number;
  maxMs: number;
  thenWaitMs?: number;
}

interface Outcome {
  /** What the client read. */
  answer: string;
  /** The body's bytes the connection took before it was cut. */
  sent: number;
  /** From the answer to the connection cut (a write refused), null when it was not. */
  cutAfterMs: number | null;
  /** From the client's last write to the service's FIN, null when none came. */
  endedAfterMs: number | null;
}

/**
 * A client that goes on sending a body of a GiB after the service answered (413: over the size limit), as Node's
 * http.request does, and reports when the service cut it.
 */
async function sendPastTheAnswer(url: string, token: string, o: Sending): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  // The service's FIN does not end the client's side: it goes on sending.
  const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true });
  let answer = '';
  let answeredAt = 0;
  let cutAt: number | null = null;
  let endedAt: number | null = null;
  const cut = new Promise<void>((resolve) => {
    const onCut = () => {
      cutAt ??= Date.now();
      resolve();
    };
    socket.once('error', onCut);
    socket.once('close', onCut);
  });
  const ended = new Promise<void>((resolve) => socket.once('end', () => {
    endedAt = Date.now();
    resolve();
  }));
  socket.on('data', (chunk: Buffer) => {
    answeredAt ||= Date.now();
    answer += chunk.toString('latin1');
  });
  socket.write([
    'POST /graphql HTTP/1.1', `Host: ${hostname}:${port}`, 'Content-Type: application/json', `Authorization: Bearer ${token}`,
    `Content-Length: ${1024 * MB}`, ...(o.close ? ['Connection: close'] : []), '', '',
  ].join('\r\n'));
  const chunk = Buffer.alloc(o.chunkBytes, 'x');
  const started = Date.now();
  let sent = 0;
  while (cutAt === null && sent < o.maxBytes && Date.now() - started < o.maxMs) {
    const more = socket.write(chunk);
    sent += chunk.length;
    if (!more) await Promise.race([once(socket, 'drain'), cut]);
    if (o.everyMs) await Promise.race([sleep(o.everyMs, undefined, { ref: false }), cut]);
  }
  const lastWriteAt = Date.now();
  // Unreferenced: a wait cut short must not hold the test process.
  if (o.thenWaitMs) await Promise.race([ended, cut, sleep(o.thenWaitMs, undefined, { ref: false })]);
  socket.destroy();
  return { answer, sent, cutAfterMs: cutAt === null ? null : cutAt - answeredAt, endedAfterMs: endedAt === null ? null : endedAt - lastWriteAt };
}

describe('answers sent before the body is read', () => {
  // A process of its own: a client in the server's process shares its event loop, and never meets the race.
  let t: InstanceProcess;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let token: string;
  beforeAll(async () => {
    db = await freshDatabase('early');
    t = await startInstanceProcess(db.url, 'http://127.0.0.1:1');
    token = await tokenFor(t.url, 'architect@demo.test');
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await db?.drop();
  });

  for (const [client, post] of Object.entries(CLIENTS)) {
    describe(client, () => {
      for (const size of [5, 10, 50]) {
        it(`reads 413 PAYLOAD_TOO_LARGE for a ${size} MB body in ${RUNS} runs of ${RUNS}`, async () => {
          const body = bodyOf(size * MB);
          const answers: (Answer | string)[] = [];
          for (let i = 0; i < RUNS; i++) answers.push(await post(t.url, body, token));
          expect(answers).toEqual(Array(RUNS).fill({ status: 413, code: 'PAYLOAD_TOO_LARGE' }));
        }, 120_000);
      }

      it(`reads 401 for a 5 MB body without a token in ${RUNS} runs of ${RUNS}`, async () => {
        const body = bodyOf(5 * MB);
        const answers: (Answer | string)[] = [];
        for (let i = 0; i < RUNS; i++) answers.push(await post(t.url, body));
        expect(answers).toEqual(Array(RUNS).fill({ status: 401, code: 'UNAUTHENTICATED' }));
      }, 120_000);

      it(`reads 431 for headers too large, a 5 MB body behind them, in ${RUNS} runs of ${RUNS}`, async () => {
        const body = bodyOf(5 * MB);
        const answers: (Answer | string)[] = [];
        for (let i = 0; i < RUNS; i++) answers.push(await post(t.url, body, token, { 'X-Padding': 'x'.repeat(32 * 1024) }));
        expect(answers).toEqual(Array(RUNS).fill({ status: 431, code: 'BAD_USER_INPUT' }));
      }, 120_000);
    });
  }

  it('keeps serving a small request on the same kind of connection afterwards', async () => {
    const res = await postWithHttp(t.url, Buffer.from(QUERY), token);
    expect(res).toEqual({ status: 200, code: 'none' });
  });

  // Bounded: a client cannot hold a connection, nor the service's parser, by streaming a body no one will read.
  describe('a client that goes on sending after its answer', () => {
    for (const [kind, close] of [['with Connection: close', true], ['kept alive', false]] as const) {
      it(`${kind}, is cut once it has sent LINGER_MAX_BYTES (${LINGER_MAX_BYTES / MB} MiB) more`, async () => {
        const outcome = await sendPastTheAnswer(t.url, token, { close, chunkBytes: 256 * 1024, everyMs: 0, maxBytes: 3 * LINGER_MAX_BYTES, maxMs: LINGER_MAX_MS });
        expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(outcome.cutAfterMs).not.toBeNull();
        expect(outcome.sent).toBeGreaterThan(LINGER_MAX_BYTES);
      }, 30_000);

      it(`${kind}, is cut LINGER_MAX_MS (${LINGER_MAX_MS / 1000} s) after its answer, however slowly it sends`, async () => {
        const outcome = await sendPastTheAnswer(t.url, token, { close, chunkBytes: 16 * 1024, everyMs: 100, maxBytes: LINGER_MAX_BYTES, maxMs: LINGER_MAX_MS + 3000 });
        expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(outcome.cutAfterMs).toBeGreaterThanOrEqual(LINGER_MAX_MS - 250);
        expect(outcome.cutAfterMs).toBeLessThan(LINGER_MAX_MS + 1500);
      }, 30_000);
    }

    it(`kept alive, is closed LINGER_IDLE_MS (${LINGER_IDLE_MS / 1000} s) after it stops sending its body`, async () => {
      const outcome = await sendPastTheAnswer(t.url, token, { close: false, chunkBytes: 64 * 1024, everyMs: 0, maxBytes: 64 * 1024, maxMs: 1000, thenWaitMs: LINGER_IDLE_MS + 5000 });
      expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(outcome.endedAfterMs).toBeGreaterThanOrEqual(LINGER_IDLE_MS - 100);
      expect(outcome.endedAfterMs).toBeLessThan(LINGER_IDLE_MS + 1000);
    }, 30_000);
  });
});
