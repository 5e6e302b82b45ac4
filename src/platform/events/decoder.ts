import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { describeDatabase } from '../database/describe';
import type { BusPublisher } from './change-bus';
import { DecodingSession, type SessionPhase } from './decoding-session';
import { describeError } from '../database/describe';
import { backoffMs } from '../retry';
import { remedyOf } from './logical-decoding';
import type { DecoderLease } from './redis-bus';
import { SlotWatch, type SlotMeasure } from './slot-watch';

/** What this instance's decoder does: nothing (another instance decodes, or stopped), or a session's phase. */
export type DecoderStatus = 'standby' | 'off' | SessionPhase;

/** First wait before a new session after one that failed, doubled at each failure up to the second. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;
/** How often the slot's retained WAL is measured while decoding. */
const MEASURE_EVERY_MS = 10_000;
/** A warning about the retained WAL at most this often. */
const WARN_EVERY_MS = 60_000;

/** Waits `ms`, or less if the session ends first (its timer cleared: nothing keeps the process up). */
async function untilEndedOr(session: DecodingSession, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([session.ended, new Promise((resolve) => { timer = setTimeout(resolve, ms); })]);
  clearTimeout(timer);
}

export interface DecoderOptions {
  url: string;
  connectTimeoutMs: number;
  log: Logger;
  bus: BusPublisher;
  /**
   * With a bus: one decoder per database, elected by the bus's lease, on the permanent slot `slotName`. Null: this
   * instance decodes for itself, a TEMPORARY slot per connection (dropped with it: nothing outlives the instance).
   */
  election: { lease: DecoderLease; slotName: string; leaseMs: number } | null;
  /** Retained WAL past which each measure logs a warning. */
  warnBytes: number;
  /** How long a commit waits for others to be published with it (DecodingSession). */
  lingerMs: number;
  /** Its connections' `application_name` (decoderName, src/platform/events/logical-decoding.ts). */
  applicationName: string;
  onStatus?(status: DecoderStatus): void;
  onMeasure?(measure: SlotMeasure | null): void;
}

/**
 * The decoding of the database's change messages (docs/subscriptions.md, "Change capture"): sessions one after the
 * other (src/platform/events/decoding-session.ts), each publishing to the bus, retried with exponential backoff (0.25 s
 * doubling up to 5 s) when one fails. Elected: a session starts only under the bus's lease, which it renews every
 * fourth of CHANGE_DECODER_LEASE_MS and gives up when it ends; a holder that cannot renew (the lease went to another,
 * or the bus is away past the lease) ends its session: the instance that claims the lease next ends a WAL sender
 * still streaming the slot and resumes from the slot's confirmed position.
 */
export class Decoder {
  private session: DecodingSession | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private statusNow: DecoderStatus = 'off';
  private readonly holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly tempSlotPrefix = `tender_${randomBytes(6).toString('hex')}`;
  private sessions = 0;
  private readonly watch: SlotWatch;
  private lastWarned = 0;

  constructor(private readonly options: DecoderOptions) {
    this.watch = new SlotWatch(options.url, options.connectTimeoutMs, options.log);
  }

  get status(): DecoderStatus {
    return this.statusNow;
  }

  start(): void {
    this.running ??= this.run();
  }

  /** Ends the session under way (a wait on the server cancelled there) and starts another at once. */
  reconnect(reason: string): void {
    if (this.stopped) return;
    this.options.log.info({ reason }, 'change events: reconnecting the decoder');
    if (this.session) void this.session.stop(reason);
    this.wake?.();
  }

  /** The session's round trip (DecodingSession.roundTrip), when one streams. */
  async roundTrip(ms: number): Promise<void> {
    await this.session?.roundTrip(ms);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.session?.stop('the instance is stopping');
    this.wake?.();
    await this.running;
    await this.watch.end().catch(() => undefined);
  }

  private async run(): Promise<void> {
    const { election, log } = this.options;
    let failures = 0;
    while (!this.stopped) {
      let epoch = 0;
      if (election) {
        epoch = await election.lease.claim(this.holder, election.leaseMs).catch(() => null) ?? 0;
        if (!epoch) {
          // Another instance decodes (or the bus is away): look again within a fourth of the lease, jittered.
          this.setStatus('standby');
          await this.sleep(Math.round(election.leaseMs / 4 * (0.75 + Math.random() / 2)));
          continue;
        }
      }
      const slot = election ? { name: election.slotName, temporary: false } : { name: `${this.tempSlotPrefix}_${++this.sessions}`, temporary: true };
      let streamed = false;
      const session = new DecodingSession({
        url: this.options.url, connectTimeoutMs: this.options.connectTimeoutMs, log, slot, bus: this.options.bus, epoch, watch: this.watch, lingerMs: this.options.lingerMs,
        applicationName: this.options.applicationName,
        onPhase: (phase) => {
          if (phase === 'streaming') streamed = true;
          this.setStatus(phase);
        },
      });
      this.session = session;
      this.setStatus('connecting');
      const keeping = election ? this.keepLease(session, election) : null;
      const measuring = this.measure(session, slot.name);
      await session.start();
      if (streamed) log.info({ slot: slot.name, elected: Boolean(election) }, 'change events: decoding');
      const why = await session.ended;
      this.session = null;
      await Promise.all([keeping, measuring]);
      if (election) await election.lease.release(this.holder).catch(() => undefined);
      this.options.onMeasure?.(null);
      if (this.stopped) break;
      failures = streamed ? 1 : failures + 1;
      const wait = backoffMs(failures, RETRY_FIRST_MS, RETRY_MAX_MS);
      log.warn({ database: describeDatabase(this.options.url), slot: slot.name, attempt: streamed ? undefined : failures, error: describeError(why), remedy: remedyOf(why), retry_in_ms: wait },
        streamed ? 'change events: not decoding, the replication connection was lost; reconnecting' : 'change events: not decoding, retrying');
      this.setStatus(election ? 'standby' : 'connecting');
      await this.sleep(wait);
    }
    this.setStatus('off');
  }

  /** Renews the lease while the session runs; ends the session once the lease is another's, or ran out unrenewed. */
  private async keepLease(session: DecodingSession, election: NonNullable<DecoderOptions['election']>): Promise<void> {
    let renewed = Date.now();
    let over = false;
    void session.ended.then(() => { over = true; });
    while (!over) {
      await untilEndedOr(session, election.leaseMs / 4);
      if (over) return;
      const held = await election.lease.renew(this.holder, election.leaseMs).catch(() => null);
      if (held) renewed = Date.now();
      else if (held === false) await session.stop('the decoder\'s lease went to another instance');
      else if (Date.now() - renewed >= election.leaseMs) await session.stop('the bus could not be reached for as long as the decoder\'s lease lasts');
    }
  }

  /** Measures what the slot holds back every MEASURE_EVERY_MS while the session streams. */
  private async measure(session: DecodingSession, slot: string): Promise<void> {
    let over = false;
    void session.ended.then(() => { over = true; });
    while (!over) {
      await untilEndedOr(session, this.statusNow === 'streaming' ? MEASURE_EVERY_MS : 1000);
      if (over || this.statusNow !== 'streaming') continue;
      const measure = await this.watch.measure(slot);
      this.options.onMeasure?.(measure);
      if (measure && measure.retainedBytes > this.options.warnBytes && Date.now() - this.lastWarned >= WARN_EVERY_MS) {
        this.lastWarned = Date.now();
        this.options.log.warn({ slot, retained_bytes: measure.retainedBytes, lag_bytes: measure.lagBytes, wal_status: measure.walStatus, safe_bytes: measure.safeBytes, threshold_bytes: this.options.warnBytes },
          'change events: the slot holds back more WAL than CHANGE_SLOT_WARN_BYTES (a transaction open for long, or decoding behind); past max_slot_wal_keep_size the server invalidates it and every subscriber gets RESYNC');
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  private setStatus(status: DecoderStatus): void {
    if (this.statusNow === status) return;
    this.statusNow = status;
    this.options.onStatus?.(status);
  }
}
