import { ChangeListener } from '../src/platform/events/change-listener';
import { createLogger } from '../src/platform/logger';
import { freshDatabase } from './support/app';
import { queryRows } from './support/databases';
import { eventually } from './support/subscriptions';

/**
 * The change listener proves that it hears (issue 21, docs/subscriptions.md "Listener"): it writes a message to itself
 * through the request path and counts as hearing only while those messages come back decoded. Here the heartbeats
 * are lost on purpose (written with another prefix), as they would be were the requests writing to another database
 * than the one decoded, then delivered again.
 */

let db: Awaited<ReturnType<typeof freshDatabase>>;
let listener: ChangeListener;
let lose = true;
const hearing: boolean[] = [];
const listening: boolean[] = [];
let resumed = 0;
let missed = 0;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  db = await freshDatabase('heartbeat');
  listener = new ChangeListener({
    url: db.url,
    connectTimeoutMs: 1000,
    log: createLogger({ logLevel: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    heartbeat: {
      intervalMs: 100,
      timeoutMs: 150,
      notify: async (channel, payload) => {
        await queryRows(db.url, 'select pg_logical_emit_message(true, $1, $2)', [lose ? 'tender_heartbeat_nobody' : channel, payload]);
      },
    },
    onEvent: () => undefined,
    onResumed: () => void resumed++,
    onStatus: (value) => void listening.push(value),
    onHearing: (value) => void hearing.push(value),
    onHeartbeatMissed: () => void missed++,
  });
});
afterAll(async () => {
  await listener?.stop();
  await db?.drop();
});

describe('ChangeListener heartbeat', () => {
  it('does not count decoding as hearing until its own heartbeat comes back', async () => {
    await listener.start();
    // It decoded (then gave that connection up: see below), yet never heard.
    expect(listening[0]).toBe(true);
    expect(listener.hearing).toBe(false);
    expect(missed).toBeGreaterThanOrEqual(1);
    expect(hearing).toEqual([]);
    // A heartbeat that did not come back drops the connection for a new one, and says why.
    expect(lines.some((l) => /a heartbeat did not come back/.test(String(l.msg)))).toBe(true);
  });

  it('hears once its heartbeats come back (on the connection its backoff opens); the first time is not a resumption', async () => {
    lose = false;
    await eventually(async () => listener.hearing, 'hearing');
    expect(hearing).toEqual([true]);
    expect(resumed).toBe(0);
  });

  it('becomes deaf when they stop coming back, and resumes (subscribers resync) when they do again', async () => {
    lose = true;
    await eventually(async () => !listener.hearing, 'deaf');
    expect(hearing).toEqual([true, false]);
    // Readiness checks of a deaf instance do not force a new connection each: the backoff paces them.
    const attempts = () => lines.filter((l) => /proving it with a heartbeat/.test(String(l.msg))).length;
    const before = attempts();
    for (let i = 0; i < 5; i++) expect(await listener.ensureHearing(20)).toBe(false);
    expect(attempts()).toBeLessThanOrEqual(before + 1);
    lose = false;
    await eventually(async () => listener.hearing, 'hearing again');
    expect(hearing).toEqual([true, false, true]);
    expect(resumed).toBe(1);
    expect(lines.filter((l) => /^change events: decoding again/.test(String(l.msg)))).toHaveLength(1);
  });

  it('answers a readiness question at once while it hears', async () => {
    const started = Date.now();
    expect(await listener.ensureHearing(5000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(50);
  });
});
