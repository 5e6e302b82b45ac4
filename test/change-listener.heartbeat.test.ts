import { loadConfig } from '../src/platform/config';
import { ChangeCapture } from '../src/platform/events/change-capture';
import { decodedDatabase } from '../src/platform/events/logical-decoding';
import { createLogger } from '../src/platform/logger';
import { Metrics } from '../src/platform/metrics';
import { freshDatabase } from './support/app';
import { queryRows } from './support/databases';
import { eventually } from './support/subscriptions';

/**
 * Change capture proves that it hears (docs/subscriptions.md "Listener"): the instance writes a message to itself through
 * the request path and counts as hearing only while those messages come back through its decoder and bus. Here the
 * heartbeats are lost on purpose (written with another prefix), as they would be were the requests writing to another
 * database than the one decoded, then delivered again. Without a bus: this instance's own decoder, in process.
 */

let db: Awaited<ReturnType<typeof freshDatabase>>;
let capture: ChangeCapture;
let lose = true;
let sent = 0;
const hearing: boolean[] = [];
const lines: Array<Record<string, unknown>> = [];
const metrics = new Metrics();
const missed = async () => (await metrics.changeListenerHeartbeatsMissed.get()).values[0]?.value ?? 0;

beforeAll(async () => {
  db = await freshDatabase('heartbeat');
  const config = loadConfig({ NODE_ENV: 'test', LISTENER_HEARTBEAT_INTERVAL_MS: '2000', LISTENER_HEARTBEAT_TIMEOUT_MS: '150' });
  const database = await decodedDatabase(db.url, 1000);
  if (typeof database === 'string') throw new Error(database);
  capture = await ChangeCapture.open({
    config: config.changes,
    directUrl: db.url,
    database,
    connectTimeoutMs: 1000,
    log: createLogger({ logLevel: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    metrics,
    sendHeartbeat: async (channel, payload) => {
      sent++;
      await queryRows(db.url, 'select pg_logical_emit_message(true, $1, $2)', [lose ? 'tender_heartbeat_nobody' : channel, payload]);
    },
    consumers: { onEvent: () => undefined, onGap: () => undefined, onHearing: (value) => void hearing.push(value) },
  });
});
afterAll(async () => {
  await capture?.stop();
  await db?.drop();
});

const logged = (msg: RegExp) => lines.filter((l) => msg.test(String(l.msg)));

describe('the heartbeat', () => {
  it('does not count decoding as hearing until its own heartbeat comes back; the start waits for it only so long', async () => {
    await capture.start();
    expect(capture.status()).toMatchObject({ mode: 'in-process', hearing: false });
    // Its session was made anew once for the missed heartbeat, not again: the cause is not the session.
    await eventually(async () => capture.status().decoder === 'streaming', 'streaming');
    await new Promise((r) => setTimeout(r, 500));
    expect(logged(/^change events: reconnecting the decoder/)).toHaveLength(1);
    expect(hearing).toEqual([]);
    expect(await missed()).toBeGreaterThanOrEqual(1);
    expect(logged(/^change events: not heard yet; serving meanwhile/)).toHaveLength(1);
  });

  it('hears once its heartbeats come back', async () => {
    lose = false;
    await eventually(async () => capture.hearing, 'hearing');
    expect(hearing).toEqual([true]);
    expect(logged(/^change events: hearing, its heartbeat came back/)).toHaveLength(1);
  });

  it('becomes deaf when they stop coming back, and hears again when they do', async () => {
    lose = true;
    await eventually(async () => !capture.hearing, 'deaf');
    expect(hearing).toEqual([true, false]);
    expect(logged(/^change events: a heartbeat did not come back/).length).toBeGreaterThanOrEqual(1);
    expect(capture.status().deafSince).toEqual(expect.any(String));
    lose = false;
    await eventually(async () => capture.hearing, 'hearing again');
    expect(hearing).toEqual([true, false, true]);
    expect(logged(/^change events: hearing again/)).toEqual([expect.objectContaining({ level: 30, down_ms: expect.any(Number) })]);
  });

  it('beats every interval while it hears, and every second while it is deaf, so that hearing again shows soon', async () => {
    let before = sent;
    await new Promise((r) => setTimeout(r, 3000));
    expect(sent - before).toBeGreaterThanOrEqual(1);
    expect(sent - before).toBeLessThanOrEqual(2);
    lose = true;
    await eventually(async () => !capture.hearing, 'deaf');
    before = sent;
    await new Promise((r) => setTimeout(r, 3000));
    expect(sent - before).toBeGreaterThanOrEqual(3);
    lose = false;
    const since = Date.now();
    await eventually(async () => capture.hearing, 'hearing again');
    expect(Date.now() - since).toBeLessThan(1500);
  });
});
