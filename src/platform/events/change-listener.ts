// Over 400 lines: one class, the decoding connection, its heartbeat and the hearing they prove are one state machine
// (a beat is only sent on a started stream, a missed one drops the connection); split, each part would reach into the
// others' state. What stands apart (the plugin, positions, the start's check) is in logical-decoding.ts.
import { randomBytes } from 'node:crypto';
import type { ClientConfig } from 'pg';
import { LogicalReplicationService, type Pgoutput } from 'pg-logical-replication';
import type { Logger } from 'pino';
import { describeDatabase } from '../database/describe';
import { TemporarySlotPgoutput, describeError, lsnBefore, remedyOf } from './logical-decoding';
import { CALLER_CHANNEL, CHANGE_CHANNEL, WEBHOOK_CHANNEL, WRITES_CHANNEL, parseChangeEvent, type ChangeEvent } from './change-event';

/** The instance's proof that it hears: a notification to itself, sent through the request path. */
interface HeartbeatOptions {
  /** Between two heartbeats (LISTENER_HEARTBEAT_INTERVAL_MS). */
  intervalMs: number;
  /** From the heartbeat's commit to its arrival, at most (LISTENER_HEARTBEAT_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * Writes `pg_logical_emit_message(true, channel, payload)` and resolves once it is committed. Through
   * DATABASE_URL, as the service's writes (and their triggers' messages) go: what comes back proves that the decoder
   * reads the database the requests write to.
   */
  notify(channel: string, payload: string): Promise<void>;
}

export interface ChangeListenerOptions {
  url: string;
  /** Bound of one connection attempt (DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  log: Logger;
  heartbeat: HeartbeatOptions;
  onEvent(event: ChangeEvent): void;
  /** An authorization change: a user's id, or `*` for every user. */
  onCallerChange?(userId: string): void;
  /** A committed write of a caller, by any instance (WRITES_CHANNEL, src/platform/database/replicas.ts): `<user id> <lsn>`. */
  onWrite?(payload: string): void;
  /** Deliveries were queued in the webhook outbox (WEBHOOK_CHANNEL): the delivery loop looks at once. */
  onWebhooksQueued?(): void;
  /** Hearing again after it did not: notifications sent meanwhile may be lost. */
  onResumed(): void;
  /** Whether the listener decodes (its replication connection streams), each time that changes (a gauge of /metrics). */
  onStatus?(listening: boolean): void;
  /** Whether its heartbeats come back, each time that changes: what readiness and the caller cache trust. */
  onHearing?(hearing: boolean): void;
  /** A heartbeat that did not come back within its bound. */
  onHeartbeatMissed?(): void;
}

/** First wait before a new attempt, doubled at each failure up to the second. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;

/** A heartbeat in flight. */
interface Beat {
  seq: string;
  /** Resolves once it is committed (or could not be sent). */
  sent: Promise<void>;
  /** Declares it missed, from its commit on. */
  deadline: NodeJS.Timeout | null;
  /** Resolves once its outcome is known: heard, missed, or not sent. */
  settled: Promise<void>;
  settle(): void;
}

/** The connection of one decoding session: its replication client, the slot it made, and what it is waiting for. */
interface Decoding {
  service: LogicalReplicationService;
  slot: string;
  /** Called on the next keepalive the server sends (a round trip's answer). */
  onKeepalive: Array<() => void>;
}

/**
 * The instance's decoding of the database's change messages (issue 32, docs/subscriptions.md): the triggers write
 * `pg_logical_emit_message(true, <channel>, <payload>)` in the writer's transaction (Migration20270315000000_change_messages),
 * which takes no lock, unlike a NOTIFY; each instance decodes them at commit, in commit order, through logical
 * replication (pgoutput, messages only: the publication `tender_changes` holds no table) on a connection of its own
 * to PostgreSQL itself (DATABASE_DIRECT_URL: a pooler does not carry replication connections), with a TEMPORARY
 * slot of its own: the slot goes with its connection, so no dead or gone instance ever holds WAL back. Messages
 * committed while an instance does not decode (between two connections) are not replayed to it: subscribers get a
 * resync once it hears again, callers are not kept meanwhile, reads go to the primary, and the webhook loops poll
 * their outbox anyway. When the connection is lost (database restarted, network), it reconnects with exponential
 * backoff (0.25 s doubling up to 5 s), saying so in the log. TCP keep-alive finds a connection that died silently.
 *
 * Decoding is not hearing: the decoder could read another database than the one the requests write to, or stall.
 * So the instance proves it: every heartbeat interval it writes a message on a channel of its own, through the
 * request path, and it counts as hearing only while those come back within the bound. A heartbeat that does not
 * come back makes it deaf (readiness 503, callers not kept) and drops the connection for a new one, after a round
 * trip on that connection (a status update asking for a reply) has shown that the heartbeat was not merely left
 * unread by a busy event loop; the first heartbeat heard afterwards brings subscribers their resync. `/readyz` asks
 * for a proof now rather than at the next beat (ensureHearing).
 */
export class ChangeListener {
  private decoding: Decoding | null = null;
  private listeningNow = false;
  private hearingNow = false;
  private stopped = false;
  private everHeard = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private beatTimer: NodeJS.Timeout | null = null;
  private attempt: Promise<void> | null = null;
  /** The heartbeat in flight: its payload, and the timer that declares it missed once it is committed. */
  private beating: Beat | null = null;
  private seq = 0;
  /** Resolved as soon as the listener hears (ensureHearing's waits). */
  private waiters: Array<() => void> = [];
  /**
   * The last connection was given up because it did not hear, not because it was lost: a readiness check then
   * waits for the backoff instead of forcing a new attempt.
   */
  private droppedDeaf = false;
  /** When hearing stopped; null while hearing. */
  private deafSince: number | null = Date.now();
  /** A message prefix no other instance writes: what comes back on it was decoded by this instance's session. */
  readonly heartbeatChannel = `tender_heartbeat_${randomBytes(8).toString('hex')}`;
  /** This instance's slot names (a new one per connection: a temporary slot may outlive a cut connection briefly). */
  private readonly slotPrefix = `tender_${randomBytes(6).toString('hex')}`;
  private slots = 0;

  constructor(private readonly options: ChangeListenerOptions) {}

  get listening(): boolean {
    return this.listeningNow;
  }

  get hearing(): boolean {
    return this.hearingNow;
  }

  /**
   * Starts decoding and beating; resolves after the first attempt and its first heartbeat (heard, missed or
   * not sendable), so that an instance that starts ready has heard itself. A failed attempt keeps retrying.
   */
  async start(): Promise<void> {
    const { intervalMs } = this.options.heartbeat;
    this.beatTimer = setInterval(() => void this.beat(), intervalMs);
    this.beatTimer.unref();
    await this.connect();
    await this.beating?.settled;
  }

  /**
   * Hearing, or a proof now (a connection attempt if there is none, then a heartbeat) bounded by `timeoutMs`:
   * readiness calls it, so that an instance is ready as soon as it hears again, not at the next beat or the
   * end of a backoff wait. After a connection given up for deafness it does not force an attempt (the backoff
   * paces those). Resolves whether it hears.
   */
  async ensureHearing(timeoutMs: number): Promise<boolean> {
    if (this.hearingNow || this.stopped) return this.hearingNow;
    let timer: NodeJS.Timeout | undefined;
    let wake!: () => void;
    const heard = new Promise<void>((resolve) => {
      wake = resolve;
      this.waiters.push(resolve);
    });
    const bound = new Promise<void>((resolve) => { timer = setTimeout(resolve, timeoutMs); });
    if (!this.decoding && this.droppedDeaf) {
      this.waiters = this.waiters.filter((w) => w !== wake);
      clearTimeout(timer);
      return false;
    }
    if (!this.decoding) {
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = null;
      }
      void this.connect();
    } else {
      void this.beat();
    }
    await Promise.race([heard, bound]);
    clearTimeout(timer);
    // A check that gave up leaves nothing behind: /readyz may be asked often while the instance is deaf.
    this.waiters = this.waiters.filter((w) => w !== wake);
    return this.hearingNow;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.beatTimer) clearInterval(this.beatTimer);
    this.beatTimer = null;
    this.endBeat();
    await this.attempt?.catch(() => undefined);
    const decoding = this.decoding;
    this.decoding = null;
    this.setListening(false);
    this.setHearing(false);
    await decoding?.service.destroy().catch(() => undefined);
  }

  /** One attempt at a time: readiness and the backoff timer share the one in flight. */
  private connect(): Promise<void> {
    this.attempt ??= this.tryOnce().finally(() => {
      this.attempt = null;
    });
    return this.attempt;
  }

  private async tryOnce(): Promise<void> {
    if (this.stopped || this.decoding) return;
    const { url, connectTimeoutMs, log } = this.options;
    const config: ClientConfig = {
      connectionString: url,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      // Without it the OS default applies (2 h on Linux) before the first probe: a peer that died silently
      // would keep callers cached and subscribers waiting that long. 10 s plus the OS's probes is a bound.
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'tender-bff change decoder',
    };
    // Acknowledged as decoded (nothing is replayed from a temporary slot), and at least every 10 s: the server then
    // recycles the WAL behind, and does not end a connection it has not heard from in wal_sender_timeout.
    const service = new LogicalReplicationService(config, { acknowledge: { auto: true, timeoutSeconds: 10 } });
    const decoding: Decoding = { service, slot: `${this.slotPrefix}_${++this.slots}`, onKeepalive: [] };
    const started = new Promise<void>((resolve) => service.once('start', () => resolve()));
    service.on('data', (_lsn: string, message: Pgoutput.Message) => {
      if (message.tag === 'message') this.received(decoding, message.prefix, Buffer.from(message.content).toString('utf8'));
    });
    service.on('heartbeat', (lsn: string, _timestamp: number, shouldRespond: boolean) => {
      if (shouldRespond) void service.acknowledge(lsnBefore(lsn)).catch(() => undefined);
      for (const wake of decoding.onKeepalive.splice(0)) wake();
    });
    service.on('error', (err: Error) => this.lost(decoding, err));
    // Settles when the replication connection ends, whatever ended it.
    const running = service.subscribe(new TemporarySlotPgoutput(connectTimeoutMs * 3), decoding.slot)
      .then(() => this.lost(decoding, new Error('connection ended')), (err: Error) => this.lost(decoding, err));
    this.decoding = decoding;
    const outcome = await Promise.race([started.then(() => 'started' as const), running.then(() => 'ended' as const)]);
    if (outcome === 'ended' || this.decoding !== decoding) {
      // Not decoding: lost() said why and scheduled the next attempt.
      return;
    }
    if (this.stopped) {
      await service.destroy().catch(() => undefined);
      return;
    }
    this.setListening(true);
    log.debug({ heartbeat_channel: this.heartbeatChannel, slot: decoding.slot }, 'change events: decoding; proving it with a heartbeat');
    void this.beat();
  }

  /** A decoded message, by its prefix (the channel the triggers write on). */
  private received(decoding: Decoding, prefix: string, payload: string): void {
    if (prefix === this.heartbeatChannel) {
      // Decoded by a session already given up (its socket still draining): proves nothing of the next one.
      if (decoding === this.decoding) this.heard(payload);
      return;
    }
    if (prefix === WRITES_CHANNEL) {
      this.options.onWrite?.(payload);
      return;
    }
    if (prefix === WEBHOOK_CHANNEL) {
      this.options.onWebhooksQueued?.();
      return;
    }
    if (prefix === CALLER_CHANNEL) {
      this.options.onCallerChange?.(payload || '*');
      return;
    }
    if (prefix !== CHANGE_CHANNEL) return;
    const event = parseChangeEvent(payload);
    if (event) this.options.onEvent(event);
    else this.options.log.warn({ payload: payload.slice(0, 200) }, 'change events: a message that is not a change event was ignored');
  }

  /**
   * Gives up the replication connection now and makes a new one, to whatever the address reaches: the primary changed
   * (src/platform/database/primary-watch.ts), and a fenced old primary keeps decoding its own, unchanging, WAL.
   */
  reconnect(reason: string): void {
    if (this.stopped) return;
    this.options.log.info({ reason }, 'change events: reconnecting to follow the primary');
    if (this.decoding) {
      this.drop(this.decoding, new Error(reason));
    } else if (this.retryTimer) {
      // Waiting out a backoff grown while the old server was gone: the new one is there now.
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
      this.failures = 0;
      void this.connect();
    }
  }

  /** Sends a heartbeat unless one is in flight or there is no decoding to prove. */
  private beat(): Promise<void> {
    // Not before the stream started: a heartbeat committed while the slot is being made can fall before its consistent
    // point, never to be decoded, and the new connection would be dropped as deaf (seen after a switchover under load).
    if (this.stopped || !this.decoding || !this.listeningNow) return Promise.resolve();
    if (this.beating) return this.beating.sent;
    const seq = String(++this.seq);
    const { notify, timeoutMs } = this.options.heartbeat;
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => { settle = resolve; });
    const beating: Beat = { seq, sent: Promise.resolve(), deadline: null, settled, settle };
    this.beating = beating;
    beating.sent = notify(this.heartbeatChannel, seq).then(() => {
      // Committed: from now on it is on its way, and must arrive within the bound.
      if (this.beating !== beating) return;
      beating.deadline = setTimeout(() => void this.missed(beating), timeoutMs);
    }, (err) => {
      // Not sent (the request path is down or saturated): that says nothing of the decoding; readiness checks
      // the request path by itself. The next beat tries again.
      if (this.beating === beating) this.beating = null;
      beating.settle();
      this.options.log.debug({ error: describeError(err) }, 'change events: heartbeat not sent');
    });
    return beating.sent;
  }

  private heard(payload: string): void {
    if (this.stopped || !this.decoding) return;
    if (this.beating && Number(payload) >= Number(this.beating.seq)) this.endBeat();
    this.setHearing(true);
  }

  private async missed(beating: Beat): Promise<void> {
    if (this.beating !== beating) return;
    const decoding = this.decoding;
    // The server's answer to a status update asking for one comes after every message it sent before: if the
    // heartbeat only sat unread (the event loop busy past the bound), it is read now, and was not missed.
    if (decoding) await this.roundTrip(decoding);
    if (this.beating !== beating || decoding !== this.decoding) return;
    this.endBeat();
    this.options.onHeartbeatMissed?.();
    this.setHearing(false);
    if (!decoding) return;
    this.options.log.warn({ timeout_ms: this.options.heartbeat.timeoutMs, heartbeat_channel: this.heartbeatChannel },
      'change events: a heartbeat did not come back: this instance does not decode what the requests write (DATABASE_DIRECT_URL must reach the same PostgreSQL as DATABASE_URL); reconnecting');
    this.drop(decoding, new Error('heartbeat not heard'));
    this.droppedDeaf = true;
  }

  /** A status update asking the server for a reply, and that reply (at most the heartbeat's bound). */
  private async roundTrip(decoding: Decoding): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => {
        decoding.onKeepalive.push(resolve);
        void decoding.service.acknowledge(decoding.service.lastLsn(), true).catch(() => resolve());
      }),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, this.options.heartbeat.timeoutMs); }),
    ]);
    clearTimeout(timer);
  }

  private endBeat(): void {
    if (this.beating?.deadline) clearTimeout(this.beating.deadline);
    this.beating?.settle();
    this.beating = null;
  }

  private lost(decoding: Decoding, err: Error): void {
    if (decoding !== this.decoding) return;
    const wasDecoding = this.listeningNow;
    this.droppedDeaf = false;
    if (wasDecoding) {
      this.options.log.warn({ error: describeError(err) },
        'change events: not decoding, the replication connection was lost; reconnecting (subscribers get no updates meanwhile)');
    } else {
      this.options.log.warn({ database: describeDatabase(this.options.url), attempt: this.failures + 1, error: describeError(err), remedy: remedyOf(err) },
        'change events: not decoding, retrying (subscribers get no updates meanwhile)');
    }
    this.drop(decoding, err);
  }

  /** Gives up this connection (lost, or deaf) and schedules a new one. */
  private drop(decoding: Decoding, err: Error): void {
    if (decoding !== this.decoding) return;
    this.decoding = null;
    this.endBeat();
    this.setListening(false);
    this.setHearing(false);
    for (const wake of decoding.onKeepalive.splice(0)) wake();
    decoding.service.removeAllListeners();
    // An error of the connection being ended must find a listener (an 'error' without one is thrown).
    decoding.service.on('error', () => undefined);
    // Its end drops its temporary slot.
    decoding.service.stop().catch(() => undefined);
    if (this.stopped) return;
    this.failures++;
    const wait = this.backoff();
    this.options.log.debug({ retry_in_ms: wait, error: describeError(err) }, 'change events: reconnecting');
    this.scheduleRetry(wait);
  }

  private backoff(): number {
    return Math.min(RETRY_FIRST_MS * 2 ** Math.max(0, this.failures - 1), RETRY_MAX_MS);
  }

  private scheduleRetry(ms: number): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, ms);
  }

  private setListening(value: boolean): void {
    if (this.listeningNow === value) return;
    this.listeningNow = value;
    this.options.onStatus?.(value);
  }

  private setHearing(value: boolean): void {
    if (value) {
      for (const wake of this.waiters.splice(0)) wake();
    }
    if (this.hearingNow === value) return;
    this.hearingNow = value;
    this.options.onHearing?.(value);
    if (!value) {
      this.deafSince = Date.now();
      return;
    }
    // The backoff starts over only once a connection proved itself: a deaf one is dropped and retried slower.
    this.failures = 0;
    const resumed = this.everHeard;
    const deafMs = this.deafSince === null ? 0 : Date.now() - this.deafSince;
    this.everHeard = true;
    this.deafSince = null;
    if (resumed) {
      this.options.log.info({ down_ms: deafMs }, 'change events: decoding again, its heartbeat heard; subscribers get a resync update');
      this.options.onResumed();
    } else {
      this.options.log.info({ channel: CHANGE_CHANNEL }, 'change events: decoding, its heartbeat heard');
    }
  }
}
