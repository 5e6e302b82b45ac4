// The change bus (docs/subscriptions.md, "Change capture"): what a decoder publishes the decoded messages to, and what
// every instance reads them from, in commit order. Two kinds: in process (no CHANGE_BUS_URL: each instance decodes for
// itself) and Redis Streams (src/platform/events/redis-bus.ts: one elected decoder per database, every instance a reader).

/** One message as the triggers wrote it: its prefix (the channel) and its content. */
export type BusMessage = readonly [prefix: string, content: string];

/**
 * Decoded messages of one committed transaction (or of a part of a large one), as the decoder publishes them.
 * `position` orders them and makes a republication recognisable: the commit's LSN (`XXXXXXXX/XXXXXXXX`, so that text
 * order is WAL order) and the part's number. A decoder that takes a slot over decodes again from the slot's confirmed
 * position, so it may publish what its predecessor already did: the bus keeps the first.
 */
export interface DecodedChunk {
  position: string;
  /** The commit's time on the database server (ms since the epoch): how late the readers hear it. */
  committedAt: number;
  messages: BusMessage[];
}

/** What a reader is told, in the bus's order. */
export interface BusHandlers {
  onMessages(messages: readonly BusMessage[], committedAt: number): void;
  /**
   * Messages may have been lost before what follows: the decoder's slot was made anew (nothing before it was
   * decoded), or the stream does not continue from this reader's position (trimmed, or lost by the bus).
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
    handlers.onConnected(true);
  }

  async publish(_epoch: number, chunks: readonly DecodedChunk[]): Promise<boolean> {
    for (const chunk of chunks) this.handlers?.onMessages(chunk.messages, chunk.committedAt);
    return true;
  }

  async markGap(_epoch: number, reason: string): Promise<boolean> {
    this.handlers?.onGap(reason);
    return true;
  }

  async catchUp(): Promise<void> {
    // Dispatched as published: nothing waits to be read.
  }

  async stop(): Promise<void> {
    this.handlers = null;
  }
}
