import { Client } from 'pg';
import type { Logger } from 'pino';
import { describeDatabase } from '../database';
import { CALLER_CHANNEL, CHANGE_CHANNEL, parseChangeEvent, type ChangeEvent } from './change-event';

export interface ChangeListenerOptions {
  url: string;
  /** Bound of one connection attempt (DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  log: Logger;
  onEvent(event: ChangeEvent): void;
  /** An authorization change: a user's id, or `*` for every user. */
  onCallerChange?(userId: string): void;
  /** After listening again following an interruption: notifications sent meanwhile are lost. */
  onResumed(): void;
  /** Whether the listener listens, each time that changes (a gauge of /metrics). */
  onStatus?(listening: boolean): void;
}

/** First wait before a new attempt, doubled at each failure up to the second. */
export const RETRY_FIRST_MS = 250;
export const RETRY_MAX_MS = 5000;

const describeError = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0] : String(err));

/**
 * The instance's one `LISTEN` on the change channel, on a connection of its own (a pooled connection is
 * shared, and a LISTEN ends with its session). When the connection is lost (database restarted, network), it
 * reconnects with exponential backoff (0.25 s doubling up to 5 s), saying so in the log; `/readyz` asks it to
 * retry at once (ensureListening) and answers 503 while it does not listen (src/http/readiness.ts). TCP
 * keep-alive finds a connection that died silently.
 */
export class ChangeListener {
  private client: Client | null = null;
  private listeningNow = false;
  private stopped = false;
  private everListened = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt: Promise<void> | null = null;
  /** When listening stopped; null while listening. */
  private downSince: number | null = Date.now();

  constructor(private readonly options: ChangeListenerOptions) {}

  get listening(): boolean {
    return this.listeningNow;
  }

  /** Starts listening; resolves after the first attempt, successful or not (a failed one keeps retrying). */
  start(): Promise<void> {
    return this.connect();
  }

  /**
   * Listening, or an attempt now (instead of at the end of the backoff) bounded by `timeoutMs`: readiness
   * calls it, so that an instance is ready as soon as its database is back. Resolves whether it listens.
   */
  async ensureListening(timeoutMs: number): Promise<boolean> {
    if (this.listeningNow || this.stopped) return this.listeningNow;
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.connect(), new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs); })]);
    clearTimeout(timer);
    return this.listeningNow;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.attempt?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    this.setListening(false);
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
      await client.query(`listen ${CHANGE_CHANNEL}; listen ${CALLER_CHANNEL}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
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
    const resumed = this.everListened;
    const downMs = this.downSince === null ? 0 : Date.now() - this.downSince;
    this.everListened = true;
    this.failures = 0;
    this.downSince = null;
    this.setListening(true);
    if (resumed) {
      log.info({ down_ms: downMs }, 'change events: listening again; subscribers get a resync update');
      this.options.onResumed();
    } else {
      log.info({ channel: CHANGE_CHANNEL }, 'change events: listening');
    }
  }

  private lost(client: Client, err: Error): void {
    if (client !== this.client) return;
    this.client = null;
    this.downSince = Date.now();
    this.setListening(false);
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (this.stopped) return;
    const wait = this.backoff();
    this.options.log.warn({ retry_in_ms: wait, error: describeError(err) },
      'change events: not listening, the database connection was lost; reconnecting (subscribers get no updates meanwhile)');
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
}
