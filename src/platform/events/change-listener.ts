import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Continuity, type ChangeBus, type DecodedChunk } from './change-bus';
import { CALLER_CHANNEL, CHANGE_CHANNEL, WEBHOOK_CHANNEL, WRITES_CHANNEL, parseChangeEvent, type ChangeEvent } from './change-event';
import { describeError } from '../database/describe';

/** The instance's proof that it hears: a message to itself, written through the request path. */
interface HeartbeatOptions {
  /** Between two heartbeats while hearing (LISTENER_HEARTBEAT_INTERVAL_MS); while deaf, at most a second. */
  intervalMs: number;
  /** From the heartbeat's commit to its arrival, at most (LISTENER_HEARTBEAT_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * Writes `pg_logical_emit_message(true, channel, payload)` and resolves once it is committed. Through DATABASE_URL,
   * as the service's writes (and their triggers' messages) go: what comes back proves that the decoder reads the
   * database the requests write to, and that the bus brings what it decodes to this instance.
   */
  send(channel: string, payload: string): Promise<void>;
}

export interface ChangeListenerOptions {
  bus: ChangeBus;
  log: Logger;
  heartbeat: HeartbeatOptions;
  /** Whether a heartbeat sent now can come back: in process, once the decoder streams (one sent before its slot's consistent point never would). */
  canHear(): boolean;
  onEvent(event: ChangeEvent): void;
  /** An authorization change: a user's id, or `*` for every user. */
  onCallerChange?(userId: string): void;
  /** A committed write of a caller, by any instance (WRITES_CHANNEL, src/platform/database/replicas.ts): `<user id>`. */
  onWrite?(payload: string): void;
  /** Deliveries were queued in the webhook outbox (WEBHOOK_CHANNEL): the delivery loop looks at once. */
  onWebhooksQueued?(): void;
  /** Messages may have been lost before what follows (a new slot, a stream that does not continue): consumers catch up. */
  onGap(reason: string): void;
  /** Whether its heartbeats come back, each time that changes: what the caller cache and read routing trust. */
  onHearing?(hearing: boolean): void;
  /** Whether the instance reads the bus, each time that changes (a gauge of /metrics). */
  onConnected?(connected: boolean): void;
  /** A heartbeat that did not come back within its bound, even after reading what the bus holds. */
  onHeartbeatMissed?(): void;
  /** How late a message reaches this instance after its commit (seconds; the database server's clock). */
  onDelay?(seconds: number): void;
  /**
   * Reads now what is on its way (the bus's entries, the decoder's socket: a heartbeat late only because a busy event
   * loop left it unread), before a heartbeat counts as missed.
   */
  catchUp(): Promise<void>;
}

/** A heartbeat in flight. */
interface Beat {
  seq: number;
  /** Declares it missed, from its commit on. */
  deadline: NodeJS.Timeout | null;
  /** Resolves once its outcome is known: heard, missed, or not sent. */
  settled: Promise<void>;
  settle(): void;
}

/**
 * What an instance hears of the database's change messages (docs/subscriptions.md, "Listener"): it reads them from the
 * change bus, in commit order, whoever decoded them (this instance, or the elected decoder of the fleet), and hands
 * each to its consumer by channel (the message's prefix).
 *
 * Reading is not hearing: the decoder could read another database than the one the requests write to, stall, or be
 * away (a takeover under way, its slot being made). So the instance proves it: every heartbeat interval it writes a
 * message on a channel of its own through the request path, and it counts as hearing only while those come back within
 * the bound. Hearing or not is said to the consumers that must know (the caller cache keeps callers only while hearing,
 * read routing sends reads to the primary while deaf, subscribers are told in band) and in the log; it does not make
 * the instance unready: what keeps it from hearing (the decoder, the bus) is shared by every instance.
 */
export class ChangeListener {
  private hearingNow = false;
  private everHeard = false;
  private stopped = false;
  private beatTimer: NodeJS.Timeout | null = null;
  private beating: Beat | null = null;
  private seq = 0;
  /** Resolved as soon as the listener hears (start's wait). */
  private waiters: Array<() => void> = [];
  /** When hearing stopped; null while hearing. */
  private deafSince: number | null = Date.now();
  /** Where this instance stands in the decoder's stream: what it read, what it missed. */
  private readonly continuity = new Continuity();
  /** A message prefix no other instance writes: what comes back on it went through the whole path to this instance. */
  readonly heartbeatChannel = `tender_heartbeat_${randomBytes(8).toString('hex')}`;

  constructor(private readonly options: ChangeListenerOptions) {}

  get hearing(): boolean {
    return this.hearingNow;
  }

  /** When it stopped hearing (ms since the epoch); null while hearing. */
  get deafSinceMs(): number | null {
    return this.deafSince;
  }

  /**
   * Reads the bus and beats; resolves once it hears, or after `boundMs` (deaf then: the instance serves meanwhile, and
   * says so). An instance that heard before it listens for HTTP never accepts a subscription it cannot serve.
   */
  async start(boundMs: number): Promise<void> {
    await this.options.bus.read({
      onPositioned: (last) => this.continuity.resetTo(last),
      onChunk: (chunk) => {
        const follows = this.continuity.check(chunk);
        if (follows === 'read already') return;
        if (follows === 'gap') this.gap('the change stream does not continue from where this instance read it (entries trimmed past CHANGE_BUS_MAX_LENGTH, or lost by the bus), or begins anew (a new slot, an empty stream)');
        this.received(chunk);
      },
      onGap: (reason) => {
        // A new slot: positions start over (after a failover, possibly below those read before).
        this.continuity.resetTo(null);
        this.gap(reason);
      },
      onConnected: (connected) => {
        this.options.onConnected?.(connected);
        if (connected) void this.beat();
        else this.lost('the bus cannot be read');
      },
    });
    this.schedule();
    void this.beat();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.waiters.push(resolve)),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, boundMs); }),
    ]);
    clearTimeout(timer);
    if (!this.hearingNow) {
      this.options.log.warn({ waited_ms: boundMs }, 'change events: not heard yet; serving meanwhile (subscribers are told updates may be missing until it hears)');
    }
  }

  /**
   * What it reads from is gone (its own decoder's connection, or the bus): it does not hear from now on, without waiting
   * for a heartbeat to miss. It hears again once one comes back.
   */
  lost(reason: string): void {
    if (this.stopped || !this.hearingNow) return;
    this.options.log.warn({ reason }, 'change events: not hearing: what this instance reads the changes from is gone; it hears again once a heartbeat comes back');
    this.endBeat();
    this.setHearing(false);
  }

  /** A heartbeat now, unless one is in flight: the decoder began streaming, the bus came back. */
  beatNow(): void {
    void this.beat();
  }

  /** Stops beating and dispatching (the bus is stopped by its owner, src/platform/events/change-capture.ts). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.beatTimer = null;
    this.endBeat();
    this.setHearing(false);
  }

  /** The next beat: every interval while hearing, at least every second while deaf, so that hearing again shows soon. */
  private schedule(): void {
    if (this.stopped) return;
    const { intervalMs } = this.options.heartbeat;
    this.beatTimer = setTimeout(() => {
      void this.beat();
      this.schedule();
    }, this.hearingNow ? intervalMs : Math.min(intervalMs, 1000));
    this.beatTimer.unref();
  }

  /** Decoded messages, in commit order, by prefix (the channel the triggers write on). */
  private received({ messages, committedAt }: DecodedChunk): void {
    if (this.stopped) return;
    if (Number.isFinite(committedAt)) this.options.onDelay?.(Math.max(0, Date.now() - committedAt) / 1000);
    for (const [prefix, payload] of messages) {
      if (prefix === this.heartbeatChannel) this.heard(Number(payload));
      else if (prefix === WRITES_CHANNEL) this.options.onWrite?.(payload);
      else if (prefix === WEBHOOK_CHANNEL) this.options.onWebhooksQueued?.();
      else if (prefix === CALLER_CHANNEL) this.options.onCallerChange?.(payload || '*');
      else if (prefix === CHANGE_CHANNEL) {
        const event = parseChangeEvent(payload);
        if (event) this.options.onEvent(event);
        else this.options.log.warn({ payload: payload.slice(0, 200) }, 'change events: a message that is not a change event was ignored');
      }
      // Other prefixes: other instances' heartbeats, other programs' messages.
    }
  }

  private gap(reason: string): void {
    if (this.stopped) return;
    this.options.log.info({ reason }, 'change events: changes may have been missed here; subscribers get RESYNC, callers are looked up again');
    this.options.onGap(reason);
    // A heartbeat in flight may be among what was missed (committed before a new slot's consistent point): not a sign
    // of deafness, and a new one proves the path from here on.
    if (this.beating) {
      this.endBeat();
      void this.beat();
    }
  }

  /** Sends a heartbeat unless one is in flight or none can come back now. */
  private async beat(): Promise<void> {
    if (this.stopped || this.beating || !this.options.canHear()) return;
    const seq = ++this.seq;
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => { settle = resolve; });
    const beating: Beat = { seq, deadline: null, settled, settle };
    this.beating = beating;
    try {
      await this.options.heartbeat.send(this.heartbeatChannel, String(seq));
    } catch (err) {
      // Not sent (the request path is down or saturated): that says nothing of the decoding; readiness checks the
      // request path by itself. The next beat tries again.
      if (this.beating === beating) this.endBeat();
      this.options.log.debug({ error: describeError(err) }, 'change events: heartbeat not sent');
      return;
    }
    // Committed: from now on it is on its way, and must arrive within the bound (unless heard already).
    if (this.beating === beating) beating.deadline = setTimeout(() => void this.missed(beating), this.options.heartbeat.timeoutMs);
  }

  private heard(seq: number): void {
    if (this.beating && seq >= this.beating.seq) this.endBeat();
    this.setHearing(true);
  }

  private async missed(beating: Beat): Promise<void> {
    if (this.beating !== beating) return;
    // Read what the bus holds now: a heartbeat merely left unread by a busy event loop, or a blocking read about to
    // return, is not missed.
    await this.options.catchUp().catch(() => undefined);
    if (this.beating !== beating) return;
    this.endBeat();
    this.options.onHeartbeatMissed?.();
    if (this.hearingNow) {
      this.options.log.warn({ timeout_ms: this.options.heartbeat.timeoutMs, heartbeat_channel: this.heartbeatChannel },
        'change events: a heartbeat did not come back: this instance hears no change for now (the decoder away or behind, the bus unreachable, or DATABASE_DIRECT_URL reaching another database than DATABASE_URL)');
    }
    this.setHearing(false);
  }

  private endBeat(): void {
    if (this.beating?.deadline) clearTimeout(this.beating.deadline);
    this.beating?.settle();
    this.beating = null;
  }

  private setHearing(value: boolean): void {
    if (value) for (const wake of this.waiters.splice(0)) wake();
    if (this.hearingNow === value) return;
    this.hearingNow = value;
    if (!value) {
      this.deafSince = Date.now();
      this.options.onHearing?.(false);
      return;
    }
    const deafMs = this.deafSince === null ? 0 : Date.now() - this.deafSince;
    this.deafSince = null;
    if (this.everHeard) this.options.log.info({ down_ms: deafMs }, 'change events: hearing again, its heartbeat came back');
    else this.options.log.info({ channel: CHANGE_CHANNEL, waited_ms: deafMs }, 'change events: hearing, its heartbeat came back');
    this.everHeard = true;
    this.options.onHearing?.(true);
    // Hearing again: the next beat at the interval.
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.schedule();
  }
}
