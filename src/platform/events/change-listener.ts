import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Logger } from 'pino';
import { describeDatabase } from '../database/database';
import { CALLER_CHANNEL, CHANGE_CHANNEL, WEBHOOK_CHANNEL, WRITES_CHANNEL, parseChangeEvent, type ChangeEvent } from './change-event';

/** The instance's proof that it hears: a notification to itself, sent through the request path. */
export interface HeartbeatOptions {
  /** Between two heartbeats (LISTENER_HEARTBEAT_INTERVAL_MS). */
  intervalMs: number;
  /** From the heartbeat's commit to its arrival, at most (LISTENER_HEARTBEAT_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * Sends `pg_notify(channel, payload)` and resolves once it is committed. Through DATABASE_URL, as the
   * service's writes (and their triggers' notifications) go, never through the listener's own connection: a
   * notification to oneself on one connection proves nothing about a LISTEN on a server connection a pooler
   * handed to someone else.
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
  /** Whether the listener holds its LISTEN, each time that changes (a gauge of /metrics). */
  onStatus?(listening: boolean): void;
  /** Whether its heartbeats come back, each time that changes: what readiness and the caller cache trust. */
  onHearing?(hearing: boolean): void;
  /** A heartbeat that did not come back within its bound. */
  onHeartbeatMissed?(): void;
}

/** First wait before a new attempt, doubled at each failure up to the second. */
export const RETRY_FIRST_MS = 250;
export const RETRY_MAX_MS = 5000;

const describeError = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0] : String(err));

/**
 * The instance's one `LISTEN` on the change channels, on a connection of its own (DATABASE_DIRECT_URL: a pooled
 * connection is shared, and a LISTEN ends with its session). When the connection is lost (database restarted,
 * network), it reconnects with exponential backoff (0.25 s doubling up to 5 s), saying so in the log. TCP
 * keep-alive finds a connection that died silently.
 *
 * Holding a LISTEN is not hearing: through a transaction pooler the LISTEN lands on a server connection that is
 * then handed to others, and nothing ever comes back. So the instance proves it: every heartbeat interval it
 * notifies itself on a channel of its own, through the request path, and it counts as hearing only while those
 * come back within the bound. A heartbeat that does not come back makes it deaf (readiness 503, callers not
 * kept) and drops the connection for a new one, after one round trip on that connection has shown that the
 * heartbeat was not merely left unread by a busy event loop; the first heartbeat heard afterwards brings
 * subscribers their resync. `/readyz` asks for a proof now rather than at the next beat (ensureHearing).
 */
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

export class ChangeListener {
  private client: Client | null = null;
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
   * waits for the backoff instead of forcing a new attempt (a LISTEN through a pooler would be retried at every
   * probe of the load balancer).
   */
  private droppedDeaf = false;
  /** When hearing stopped; null while hearing. */
  private deafSince: number | null = Date.now();
  /** A channel no other instance listens on: what comes back on it was heard through this LISTEN. */
  readonly heartbeatChannel = `tender_heartbeat_${randomBytes(8).toString('hex')}`;

  constructor(private readonly options: ChangeListenerOptions) {}

  get listening(): boolean {
    return this.listeningNow;
  }

  get hearing(): boolean {
    return this.hearingNow;
  }

  /**
   * Starts listening and beating; resolves after the first attempt and its first heartbeat (heard, missed or
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
    if (!this.client && this.droppedDeaf) {
      this.waiters = this.waiters.filter((w) => w !== wake);
      clearTimeout(timer);
      return false;
    }
    if (!this.client) {
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
    const client = this.client;
    this.client = null;
    this.setListening(false);
    this.setHearing(false);
    await client?.end().catch(() => undefined);
  }

  /** One attempt at a time: readiness and the backoff timer share the one in flight. */
  private connect(): Promise<void> {
    this.attempt ??= this.tryOnce().finally(() => {
      this.attempt = null;
    });
    return this.attempt;
  }

  private async tryOnce(): Promise<void> {
    if (this.stopped || this.client) return;
    const { url, connectTimeoutMs, log } = this.options;
    const client = new Client({
      connectionString: url,
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: connectTimeoutMs,
      keepAlive: true,
      // Without it the OS default applies (2 h on Linux) before the first probe: a peer that died silently
      // would keep callers cached and subscribers waiting that long. 10 s plus the OS's probes is a bound.
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'tender-bff change listener',
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.channel === this.heartbeatChannel) {
        // Read from a connection already given up (its socket still draining): proves nothing of the next one.
        if (client === this.client) this.heard(message.payload ?? '');
        return;
      }
      if (message.channel === WRITES_CHANNEL) {
        this.options.onWrite?.(message.payload ?? '');
        return;
      }
      if (message.channel === WEBHOOK_CHANNEL) {
        this.options.onWebhooksQueued?.();
        return;
      }
      if (message.channel === CALLER_CHANNEL) {
        this.options.onCallerChange?.(message.payload ?? '*');
        return;
      }
      if (message.channel !== CHANGE_CHANNEL) return;
      const event = parseChangeEvent(message.payload);
      if (event) this.options.onEvent(event);
      else log.warn({ payload: message.payload?.slice(0, 200) }, 'change events: a notification that is not a change event was ignored');
    });
    try {
      await client.connect();
      const channels = [CHANGE_CHANNEL, CALLER_CHANNEL, this.heartbeatChannel, ...(this.options.onWrite ? [WRITES_CHANNEL] : []),
        ...(this.options.onWebhooksQueued ? [WEBHOOK_CHANNEL] : [])];
      await client.query(channels.map((channel) => `listen ${channel}`).join('; '));
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.droppedDeaf = false;
      this.failures++;
      const wait = this.backoff();
      log.warn({ database: describeDatabase(url), attempt: this.failures, retry_in_ms: wait, error: describeError(err) },
        'change events: not listening, retrying (subscribers get no updates meanwhile)');
      this.scheduleRetry(wait);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.setListening(true);
    log.debug({ heartbeat_channel: this.heartbeatChannel }, 'change events: LISTEN held; proving it with a heartbeat');
    void this.beat();
  }

  /** Sends a heartbeat unless one is in flight or there is no LISTEN to prove. */
  private beat(): Promise<void> {
    if (this.stopped || !this.client) return Promise.resolve();
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
      // Not sent (the request path is down or saturated): that says nothing of the LISTEN; readiness checks
      // the request path by itself. The next beat tries again.
      if (this.beating === beating) this.beating = null;
      beating.settle();
      this.options.log.debug({ error: describeError(err) }, 'change events: heartbeat not sent');
    });
    return beating.sent;
  }

  private heard(payload: string): void {
    if (this.stopped || !this.client) return;
    if (this.beating && Number(payload) >= Number(this.beating.seq)) this.endBeat();
    this.setHearing(true);
  }

  private async missed(beating: Beat): Promise<void> {
    if (this.beating !== beating) return;
    const client = this.client;
    // A statement's answer comes after every notification the server sent before it: if the heartbeat only sat
    // unread (the event loop busy past the bound), it is read now, and was not missed.
    if (client) await client.query('select 1').catch(() => undefined);
    if (this.beating !== beating || client !== this.client) return;
    this.endBeat();
    this.options.onHeartbeatMissed?.();
    this.setHearing(false);
    if (!client) return;
    this.options.log.warn({ timeout_ms: this.options.heartbeat.timeoutMs, heartbeat_channel: this.heartbeatChannel },
      'change events: a heartbeat did not come back: this instance does not hear the database\'s notifications (a LISTEN through a transaction pooler never does: DATABASE_DIRECT_URL must reach PostgreSQL itself); reconnecting');
    this.drop(client, new Error('heartbeat not heard'));
    this.droppedDeaf = true;
  }

  private endBeat(): void {
    if (this.beating?.deadline) clearTimeout(this.beating.deadline);
    this.beating?.settle();
    this.beating = null;
  }

  private lost(client: Client, err: Error): void {
    if (client !== this.client) return;
    this.droppedDeaf = false;
    this.options.log.warn({ error: describeError(err) },
      'change events: not listening, the database connection was lost; reconnecting (subscribers get no updates meanwhile)');
    this.drop(client, err);
  }

  /** Gives up this connection (lost, or deaf) and schedules a new one. */
  private drop(client: Client, err: Error): void {
    if (client !== this.client) return;
    this.client = null;
    this.endBeat();
    this.setListening(false);
    this.setHearing(false);
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
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
      this.options.log.info({ down_ms: deafMs }, 'change events: listening again, its heartbeat heard; subscribers get a resync update');
      this.options.onResumed();
    } else {
      this.options.log.info({ channel: CHANGE_CHANNEL }, 'change events: listening, its heartbeat heard');
    }
  }
}
