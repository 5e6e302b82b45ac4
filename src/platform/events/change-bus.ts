// The change bus (docs/subscriptions.md, "Change capture"): what a decoder publishes the decoded messages to, and what
// every instance reads them from, in commit order. Two kinds: in process (no CHANGE_BUS_URL: each instance decodes for
// itself) and Redis Streams (src/platform/events/redis-bus.ts: one elected decoder per database, every instance a reader).

/** One message as the triggers wrote it: its prefix (the channel) and its content. */
export type BusMessage = readonly [prefix: string, content: string];

/**
 * Decoded messages of one committed transaction (or of a part of a large one), as the decoder publishes them.
 * `position` orders them and makes a republication recognisable: the commit's LSN (`XXXXXXXX/XXXXXXXX`, so that text
 * order is WAL order) and the part's number. A decoder that takes a slot over decodes again from the slot's confirmed
 * position, so it may publish what its predecessor already did: the bus may keep both, and a reader skips the second.
 */
export interface DecodedChunk {
  position: string;
  /**
   * What comes right before it: for a transaction's first part, the end of the commit before it in the decoder's
   * stream (for the first of a session, where the session took the stream up); for another part, the part before.
   * A reader that has not read that far has missed something (Continuity, below).
   */
  after: string;
  /** The commit's end LSN, on its last part (what confirming the slot up to it takes); null on the others. */
  end: string | null;
  /** The commit's time on the database server (ms since the epoch): how late the readers hear it. */
  committedAt: number;
  messages: BusMessage[];
}

/**
 * A chunk's position: its commit's LSN (normalLsn, src/platform/events/logical-decoding.ts) and its part's number, five
 * digits (a transaction of 100,000 parts of 1,000 messages, some 28 GB of messages, is past what one commit writes).
 */
export const chunkPosition = (commitLsn: string, part: number) => `${commitLsn}:${String(part).padStart(5, '0')}`;

/** A transaction's first part. */
const isFirstPart = (position: string) => position.endsWith(':00000');

/**
 * Whether what a reader reads follows what it read before, in the decoder's terms (WAL positions), whatever the bus did
 * with its own entries (trimmed, lost in a restart, appended twice around a takeover): a chunk read already is skipped,
 * one whose predecessor this reader has not read is a gap.
 */
export class Continuity {
  private lastPosition: string | null = null;
  private lastEnd: string | null = null;

  /**
   * Stands the reader after `chunk` (the stream's last when it begins reading), or nowhere: after a gap marker, or on a
   * stream empty when it began. From nowhere, the first chunk is a gap too: a new slot decodes from its consistent point,
   * which comes once the transactions older than it end, maybe long after its marker, and whoever subscribed meanwhile
   * may have missed what was committed before it.
   */
  resetTo(chunk: DecodedChunk | null): void {
    this.lastPosition = chunk?.position ?? null;
    this.lastEnd = chunk ? chunk.end ?? chunk.after : null;
  }

  check(chunk: DecodedChunk): 'read already' | 'gap' | 'next' {
    if (this.lastPosition !== null && chunk.position <= this.lastPosition) return 'read already';
    const follows = this.lastPosition !== null
      && (isFirstPart(chunk.position) ? this.lastEnd !== null && chunk.after <= this.lastEnd : chunk.after === this.lastPosition);
    this.lastPosition = chunk.position;
    if (chunk.end) this.lastEnd = chunk.end;
    return follows ? 'next' : 'gap';
  }
}

/** What a reader is told, in the bus's order. */
export interface BusHandlers {
  /** Where reading begins: after the stream's last chunk (null: an empty stream, one that ends on a gap marker, in process). */
  onPositioned(last: DecodedChunk | null): void;
  onChunk(chunk: DecodedChunk): void;
  /**
   * Messages may have been lost before what follows: the decoder's slot was made anew (nothing before it was decoded),
   * or the bus could not be read from where this reader stood.
   */
  onGap(reason: string): void;
  /** Whether the reader reaches the bus, each time that changes (in process: always). */
  onConnected(connected: boolean): void;
}

/** The publishing side, as a decoder uses it. `epoch` fences a decoder that lost its lease: its writes are refused. */
export interface BusPublisher {
  /** Appends the chunks the bus does not hold yet; false when the epoch is no longer the bus's (fenced). */
  publish(epoch: number, chunks: readonly DecodedChunk[]): Promise<boolean>;
  /** Appends a gap marker: the slot was made anew; false when fenced. */
  markGap(epoch: number, reason: string): Promise<boolean>;
  /** The end of the last commit published (null: unknown, or none yet): where a new session's stream takes up. */
  publishedEnd(): Promise<string | null>;
}

export interface ChangeBus extends BusPublisher {
  /** How the log names it. */
  readonly description: string;
  /** Starts reading from the stream's end now; every later entry reaches `handlers`, in order. */
  read(handlers: BusHandlers): Promise<void>;
  /** Reads now what is already there (a heartbeat late only because the blocking read has not returned yet). */
  catchUp(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The bus of an instance that decodes for itself: the decoder's publications are dispatched in process, in order, to
 * the one reader. Nothing to lose between them, so no gap but the decoder's own (a new temporary slot).
 */
export class InProcessBus implements ChangeBus {
  readonly description = 'in process (no CHANGE_BUS_URL: this instance decodes for itself)';
  private handlers: BusHandlers | null = null;

  async read(handlers: BusHandlers): Promise<void> {
    this.handlers = handlers;
    handlers.onPositioned(null);
    handlers.onConnected(true);
  }

  async publish(_epoch: number, chunks: readonly DecodedChunk[]): Promise<boolean> {
    for (const chunk of chunks) this.handlers?.onChunk(chunk);
    return true;
  }

  async markGap(_epoch: number, reason: string): Promise<boolean> {
    this.handlers?.onGap(reason);
    return true;
  }

  async publishedEnd(): Promise<string | null> {
    // Each session is a new slot of its own, whose gap marker goes first.
    return null;
  }

  async catchUp(): Promise<void> {
    // Dispatched as published: nothing waits to be read.
  }

  async stop(): Promise<void> {
    this.handlers = null;
  }
}
