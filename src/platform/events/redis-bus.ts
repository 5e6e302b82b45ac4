import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BusHandlers, BusMessage, ChangeBus, DecodedChunk } from './change-bus';
import { describeError } from '../database/describe';
import { backoffMs } from '../retry';

// The change bus on Redis Streams (CHANGE_BUS_URL; docs/subscriptions.md, "The bus"). One stream per database: the
// elected decoder appends each committed transaction's messages, every instance reads them from its own position with
// XREAD. Beside the stream, two keys: the decoder's lease (who decodes, renewed while alive) and its state (the epoch
// that fences a decoder that lost the lease, and the last position and commit end appended, which make a republication
// a no-op and tell a new session where the stream stands). The three share a hash tag, so that the scripts below run
// on one node of a Redis Cluster too. Whether a reader missed something is judged from the decoder's own positions
// (src/platform/events/change-bus.ts, Continuity), not from the stream's ids: a Redis restarted without its data, or a
// trimmed stream, is then told apart from a stream that merely goes on.

/**
 * Appends a gap marker (ARGV[3] not empty: the slot was made anew, decoding starts over) and the chunks whose position
 * is past the last appended. Refused (-1) unless ARGV[1] is the current epoch.
 */
const APPEND = `
if redis.call('HGET', KEYS[2], 'epoch') ~= ARGV[1] then return -1 end
local position = redis.call('HGET', KEYS[2], 'position') or ''
local added = 0
if ARGV[3] ~= '' then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'gap', ARGV[3])
  redis.call('HDEL', KEYS[2], 'end')
  position = ''
  added = added + 1
end
for i = 4, #ARGV, 5 do
  if ARGV[i] > position then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'p', ARGV[i], 'a', ARGV[i + 1], 'e', ARGV[i + 2], 'at', ARGV[i + 3], 'm', ARGV[i + 4])
    if ARGV[i + 2] ~= '' then redis.call('HSET', KEYS[2], 'end', ARGV[i + 2]) end
    position = ARGV[i]
    added = added + 1
  end
end
redis.call('HSET', KEYS[2], 'position', position)
return added`;

/**
 * Takes the lease when nobody holds it, and a new epoch with it (0: held by another). Epochs come from the server's
 * clock (microseconds), above the last one: a Redis restarted empty gives none that an earlier holder had.
 */
const CLAIM = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
local time = redis.call('TIME')
local epoch = tonumber(time[1]) * 1000000 + tonumber(time[2])
local last = tonumber(redis.call('HGET', KEYS[2], 'epoch') or '0')
if epoch <= last then epoch = last + 1 end
epoch = string.format('%.0f', epoch)
redis.call('HSET', KEYS[2], 'epoch', epoch)
return epoch`;

/** Extends the lease of its holder (1), or says it is another's or gone (0). */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0`;

/** Gives the lease up, when still held: another instance may take the slot at once (a rolling deploy). */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0`;

interface Scripts {
  appendChanges(stream: string, state: string, ...args: Array<string | number>): Promise<number>;
  claimDecoder(lease: string, state: string, holder: string, leaseMs: number): Promise<number>;
  renewDecoder(lease: string, holder: string, leaseMs: number): Promise<number>;
  releaseDecoder(lease: string, holder: string): Promise<number>;
}

/** How long one XREAD waits for an entry before it is sent again. */
const BLOCK_MS = 2000;
/** Entries per read. */
const READ_COUNT = 1000;
/** Waits between two failed reads, doubling. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2000;

/** A stream entry as the decoder wrote it: a chunk, or a gap marker (`gap`). */
type Entry = DecodedChunk | { gap: string };

/** An entry's fields; null for an entry that is not the decoder's. */
function entryOf(list: string[]): Entry | null {
  const f: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) f[list[i]] = list[i + 1];
  if (f.gap !== undefined) return { gap: f.gap };
  if (!f.p || f.a === undefined) return null;
  try {
    return { position: f.p, after: f.a, end: f.e || null, committedAt: Number(f.at), messages: JSON.parse(f.m ?? '[]') as BusMessage[] };
  } catch {
    return null;
  }
}

/** The entries of an XREAD's reply on one stream: RESP3 (ioredis 6's default) answers a map, flattened to [key, entries]; RESP2 [[key, entries]]. */
function entriesOf(reply: unknown): Array<[string, string[]]> {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  if (typeof reply[0] === 'string') return (reply[1] ?? []) as Array<[string, string[]]>;
  return ((reply[0] as unknown[])?.[1] ?? []) as Array<[string, string[]]>;
}

/** A stream entry's id as a number pair, to compare two (`<ms>-<seq>`). */
function idOrder(id: string): [bigint, bigint] {
  const [ms, seq] = id.split('-');
  return [BigInt(ms || '0'), BigInt(seq || '0')];
}

/** Whether stream id `a` comes after `b` (`''`, before any entry, comes before every id). */
function isAfter(a: string, b: string): boolean {
  if (b === '') return a !== '';
  if (a === '') return false;
  const [x, y] = [idOrder(a), idOrder(b)];
  return x[0] > y[0] || (x[0] === y[0] && x[1] > y[1]);
}

export interface RedisBusOptions {
  url: string;
  /** The keys' common part, hash tag included: `<prefix>:changes:{<system id>:<database>}`. */
  key: string;
  maxLength: number;
  /** Bound of one command (publishing, the lease); a read waits BLOCK_MS more. */
  timeoutMs: number;
  log: Logger;
}

/** What the decoder's election needs of the bus (src/platform/events/decoder.ts). */
export interface DecoderLease {
  /** The lease for `holder` and a new epoch when nobody holds it; null when another does. */
  claim(holder: string, leaseMs: number): Promise<number | null>;
  /** Whether `holder` still holds it, extended. */
  renew(holder: string, leaseMs: number): Promise<boolean>;
  release(holder: string): Promise<void>;
}

/** Redis Streams as the change bus: see the top of this file. */
export class RedisChangeBus implements ChangeBus, DecoderLease {
  readonly description: string;
  /** The keys' common part (RedisBusOptions.key): what names this bus. */
  readonly key: string;
  private readonly stream: string;
  private readonly state: string;
  private readonly lease: string;
  /** Publishing and the lease: commands bounded by timeoutMs. */
  private writer: Redis & Scripts;
  /** XREAD BLOCK, alone on its connection. */
  private reader: Redis;
  private handlers: BusHandlers | null = null;
  /** The stream id of the last entry read; '' before the first of an empty stream; null until a position is known. */
  private last: string | null = null;
  private connected: boolean | null = null;
  private stopped = false;
  private reading: Promise<void> | null = null;

  private constructor(private readonly options: RedisBusOptions, RedisClass: typeof Redis) {
    this.key = options.key;
    this.stream = `${options.key}:stream`;
    this.state = `${options.key}:state`;
    this.lease = `${options.key}:lease`;
    const u = new URL(options.url);
    this.description = `Redis Streams at ${u.hostname}:${u.port || 6379}, stream ${this.stream}`;
    const common = {
      lazyConnect: true,
      // Fail at once while disconnected: the decoder keeps what it could not publish, readers retry.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: options.timeoutMs,
      disconnectTimeout: 100,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, RETRY_MAX_MS),
      connectionName: 'tender-bff changes',
    };
    this.writer = new RedisClass(options.url, { ...common, commandTimeout: options.timeoutMs }) as Redis & Scripts;
    this.writer.defineCommand('appendChanges', { numberOfKeys: 2, lua: APPEND });
    this.writer.defineCommand('claimDecoder', { numberOfKeys: 2, lua: CLAIM });
    this.writer.defineCommand('renewDecoder', { numberOfKeys: 1, lua: RENEW });
    this.writer.defineCommand('releaseDecoder', { numberOfKeys: 1, lua: RELEASE });
    this.reader = new RedisClass(options.url, { ...common, commandTimeout: BLOCK_MS + options.timeoutMs });
    // Reported by the commands that fail; the client's own reconnection goes on.
    this.writer.on('error', () => undefined);
    this.reader.on('error', () => undefined);
  }

  /** Loads ioredis (only when a bus is configured) and opens the connections; an unreachable Redis is retried, not fatal. */
  static async open(options: RedisBusOptions): Promise<RedisChangeBus> {
    const { Redis } = await import('ioredis');
    const bus = new RedisChangeBus(options, Redis);
    await Promise.all([bus.writer.connect(), bus.reader.connect()]).catch((err) => {
      options.log.warn({ bus: bus.description, error: describeError(err) }, 'change bus: Redis cannot be reached at start; retrying (this instance hears no change meanwhile)');
    });
    return bus;
  }

  async read(handlers: BusHandlers): Promise<void> {
    this.handlers = handlers;
    await this.position().catch(() => undefined);
    this.reading = this.readLoop();
  }

  async catchUp(): Promise<void> {
    if (this.last === null || !this.handlers) return;
    const from = this.last;
    const top = await this.tail().catch(() => null);
    // Ids smaller than this reader's position: the stream was made anew (Redis lost it, its clock went back). Read it from
    // its start: what this reader read already is skipped by its position.
    if (top && from !== '' && isAfter(from, top.id)) this.last = '';
    const reply = await this.writer.call('XREAD', 'COUNT', READ_COUNT, 'STREAMS', this.stream, this.last || '0-0').catch(() => null);
    this.deliver(reply);
  }

  async publish(epoch: number, chunks: readonly DecodedChunk[]): Promise<boolean> {
    const args = chunks.flatMap((c) => [c.position, c.after, c.end ?? '', c.committedAt, JSON.stringify(c.messages)]);
    return this.append(epoch, '', args);
  }

  async publishedEnd(): Promise<string | null> {
    return this.writer.hget(this.state, 'end');
  }

  async markGap(epoch: number, reason: string): Promise<boolean> {
    return this.append(epoch, reason, []);
  }

  async claim(holder: string, leaseMs: number): Promise<number | null> {
    const epoch = Number(await this.writer.claimDecoder(this.lease, this.state, holder, leaseMs));
    return epoch > 0 ? epoch : null;
  }

  async renew(holder: string, leaseMs: number): Promise<boolean> {
    return Number(await this.writer.renewDecoder(this.lease, holder, leaseMs)) === 1;
  }

  async release(holder: string): Promise<void> {
    await this.writer.releaseDecoder(this.lease, holder);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.handlers = null;
    this.reader.disconnect();
    await this.reading?.catch(() => undefined);
    this.writer.disconnect();
  }

  private async append(epoch: number, gap: string, args: Array<string | number>): Promise<boolean> {
    return Number(await this.writer.appendChanges(this.stream, this.state, epoch, this.options.maxLength, gap, ...args)) >= 0;
  }

  /** The stream's last entry, null when it has none. */
  private async tail(): Promise<{ id: string; entry: Entry | null } | null> {
    const top = await this.writer.call('XREVRANGE', this.stream, '+', '-', 'COUNT', 1) as Array<[string, string[]]>;
    return top.length ? { id: top[0][0], entry: entryOf(top[0][1]) } : null;
  }

  /** Stands this reader at the stream's end: what was appended before is not for it. */
  private async position(): Promise<void> {
    const top = await this.tail();
    this.last = top?.id ?? '';
    this.handlers?.onPositioned(top?.entry && !('gap' in top.entry) ? top.entry : null);
  }

  private async readLoop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.last === null) {
          // Redis could not be reached when reading began: whatever was appended meanwhile is behind the tail.
          await this.position();
          this.handlers?.onGap('the change bus could not be reached when this instance began reading');
        }
        const reply = await this.reader.call('XREAD', 'COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', this.stream, this.last || '0-0');
        failures = 0;
        this.setConnected(true);
        this.deliver(reply);
      } catch (err) {
        if (this.stopped) return;
        if (this.connected !== false) this.options.log.warn({ bus: this.description, error: describeError(err) }, 'change bus: cannot read; retrying (this instance hears no change meanwhile, and resumes from its position)');
        this.setConnected(false);
        failures++;
        await new Promise((resolve) => setTimeout(resolve, backoffMs(failures, RETRY_FIRST_MS, RETRY_MAX_MS)));
      }
    }
  }

  /** An XREAD's reply, entry by entry, past this reader's position only (catchUp and the loop may read the same). */
  private deliver(reply: unknown): void {
    const handlers = this.handlers;
    if (!handlers || this.last === null) return;
    for (const [id, list] of entriesOf(reply)) {
      if (!isAfter(id, this.last)) continue;
      this.last = id;
      const entry = entryOf(list);
      if (!entry) this.options.log.warn({ id }, 'change bus: an entry that is not the decoder\'s was ignored');
      else if ('gap' in entry) handlers.onGap(entry.gap);
      else handlers.onChunk(entry);
    }
  }

  private setConnected(connected: boolean): void {
    if (this.connected === connected) return;
    this.connected = connected;
    this.handlers?.onConnected(connected);
  }
}
