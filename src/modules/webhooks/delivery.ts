import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterQueue } from 'rate-limiter-flexible';
import { Webhook } from 'standardwebhooks';
import type { WebhooksConfig } from '../../platform/config';
import type { Metrics } from '../../platform/metrics';
import { EndpointHealth } from './endpoint-health';
import { WebhookHousekeeping } from './housekeeping';
import { queryOn, type Query } from './query';
import { WebhookSender, type AttemptResult } from './send';
import { inSpan } from '../../platform/telemetry/tracing';

/** A delivery claimed by this instance: one attempt to make. */
interface Claimed {
  id: string;
  attempt: number;
  event_id: string;
  type: string;
  body: string;
  /** Seconds since 1970. */
  created_epoch: number;
  endpoint_id: string;
  organization_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  failing_since: Date | null;
  consecutive_failures: number;
}

interface Recorded extends AttemptResult {
  delivery: Claimed;
  attemptedAt: Date;
  /** Null: no retry (succeeded, 410, or the schedule is spent). */
  retryInMs: number | null;
  /** The endpoint is paused this long (a throttling answer); null: not. */
  pauseMs: number | null;
}

/**
 * Beyond the attempt's own bound (WEBHOOK_TIMEOUT), how long a claim keeps other instances off before it counts as
 * abandoned (an instance killed in the middle): its result is written within this margin. A claim that waited for
 * its organization's pace longer than half of it is renewed before the attempt, or dropped if another instance took it.
 */
const LEASE_MARGIN_MS = 5000;
/** At shutdown, how long attempts in flight are waited for; the others are left to their lease (attempted again). */
const STOP_WAIT_MS = 2000;
/** The longest a receiver's `Retry-After` pauses its endpoint: a receiver cannot park its deliveries for days. */
const MAX_PAUSE_MS = 3600_000;

/**
 * The delivery loop of one instance (docs/webhooks.md). Any number of instances run it on one database:
 *
 * - A claim is one statement: due deliveries of enabled endpoints, `FOR UPDATE SKIP LOCKED`, get their attempt
 *   counted and `next_attempt_at` pushed past the attempt's bound (the lease), and commit. Another instance skips
 *   them while they are locked and does not see them as due until the lease runs out, so an attempt is sent by one
 *   instance. An instance killed in the middle leaves the lease to run out: the delivery is attempted again, with
 *   the same `webhook-id` (at least once).
 * - The attempt happens outside any transaction; its result is written with the attempt number it was claimed with,
 *   so that a result arriving after its lease ran out (and another instance claimed it) changes nothing.
 * - Woken by the outbox's message (decoded by the change listener), and polling every WEBHOOK_POLL_INTERVAL for
 *   retries and wake-ups missed.
 * - Recorded attempts judge their endpoints' health (endpoint-health.ts); the polls also sample the backlog and
 *   prune (housekeeping.ts).
 */
export class WebhookDelivery {
  private readonly sql: Query;
  private readonly sender: WebhookSender;
  private readonly health: EndpointHealth;
  private readonly housekeeping: WebhookHousekeeping;
  /** Per organization, attempts per second, waiting in FIFO order for their token (rate-limiter-flexible). */
  private readonly pace: RateLimiterQueue;
  private inFlight = 0;
  private claiming = false;
  /** A claim found fewer due deliveries than it asked for: completions do not claim again until woken. */
  private drained = false;
  /** Wakes so far: a wake that arrives while a claim runs is not lost when that claim comes back short. */
  private wakes = 0;
  private stopped = true;
  /** Stopped and its results written: what still finishes is left to its lease. */
  private closed = false;
  private results: Recorded[] = [];
  /**
   * Results are written together, as a database groups commits: while one record is written, the answers that come
   * in wait and go in the next one, at once after it. One statement per answer when they are few, large batches
   * under load, and no fixed linger: an attempt's lease, which counts in its endpoint's share, ends as soon as can be.
   */
  private recording = false;
  /**
   * Deliveries answered whose results are not written yet: their leases still count in the database, but no request
   * of theirs is in flight, so this instance's claims leave them out of the shares (webhook_claim's p_answered).
   */
  private readonly answered = new Set<string>();
  private flushQueued = false;
  private flushing: Promise<void> = Promise.resolve();
  private pollTimer: NodeJS.Timeout | null = null;
  private idle: Array<() => void> = [];
  /**
   * Endpoints paused by a throttling answer this instance got (epoch ms): known before the result is written, so that
   * an attempt claimed meanwhile is given back rather than sent. Other instances learn it from the endpoint's row.
   */
  private readonly paused = new Map<string, number>();
  /** Claims failing (the database unreachable): said once, and once when they work again, not at every poll. */
  private claimsFailing = false;

  constructor(
    /** A pool of its own (src/app.ts): delivery never takes the request pool's connections, nor counts among its statements. */
    pool: Pool,
    private readonly config: WebhooksConfig,
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {
    this.sql = queryOn(pool);
    this.sender = new WebhookSender(config, log);
    this.health = new EndpointHealth(this.sql, config, log, metrics);
    this.housekeeping = new WebhookHousekeeping(this.sql, config, log, metrics);
    this.pace = new RateLimiterQueue(new RateLimiterMemory({ points: config.maxAttemptsPerSecond, duration: 1 }), { maxQueueSize: 1e6 });
  }

  start(): void {
    this.stopped = false;
    this.housekeeping.start();
    this.poll();
  }

  /**
   * The outbox's message, decoded: deliveries were queued. Also called when room is made in the shares (an answer
   * came, a result was written): a claim running meanwhile that comes back short does not stop the loop.
   */
  wake(): void {
    this.wakes++;
    this.drained = false;
    void this.pump();
  }

  private poll(): void {
    if (this.stopped) return;
    this.wake();
    void this.housekeeping.run();
    this.pollTimer = setTimeout(() => this.poll(), this.config.pollIntervalMs);
    this.pollTimer.unref();
  }

  private async pump(): Promise<void> {
    if (this.stopped || this.claiming || this.drained) return;
    const free = this.config.concurrency - this.inFlight;
    if (free <= 0) return;
    this.claiming = true;
    const wakes = this.wakes;
    let claimed: Claimed[] = [];
    try {
      claimed = await this.claim(free);
      if (this.claimsFailing) this.log.info('webhooks: claiming due deliveries works again');
      this.claimsFailing = false;
    } catch (err) {
      if (!this.claimsFailing) this.log.warn({ err: (err as Error).message }, 'webhooks: claiming due deliveries failed; retrying at each poll');
      this.claimsFailing = true;
      this.drained = true;
    } finally {
      this.claiming = false;
    }
    // Short, and not woken meanwhile: nothing more is due until the next wake. Woken meanwhile: claim again, the
    // notifying transaction may have committed after this claim's snapshot.
    if (claimed.length < free && this.wakes === wakes) this.drained = true;
    for (const delivery of claimed) {
      this.inFlight++;
      void this.attempt(delivery).then(() => {
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
        this.wake();
      });
    }
    if (!this.drained) void this.pump();
  }

  private get leaseSeconds(): number {
    return (this.config.timeoutMs + LEASE_MARGIN_MS) / 1000;
  }

  /**
   * Due deliveries, fairly (webhook_claim, Migration20270401000000_webhook_fairness): at most WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT
   * (one while the endpoint's breaker is open) and WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION in flight across the fleet,
   * nothing of a paused endpoint, and organizations served in turns.
   */
  private claim(limit: number): Promise<Claimed[]> {
    const c = this.config;
    return this.sql<Claimed>('select * from webhook_claim(?, ?, ?, ?, ?, ?::uuid[])',
      [limit, this.leaseSeconds, c.maxInFlightPerEndpoint, c.maxInFlightPerOrganization, c.breakerAfter, [...this.answered]]);
  }

  /** The `webhook-*` headers of Standard Webhooks; during a rotation, one signature per secret. */
  private headers(delivery: Claimed): Record<string, string> {
    const now = new Date();
    const secrets = delivery.previous_secret ? [delivery.secret, delivery.previous_secret] : [delivery.secret];
    return {
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': secrets.map((s) => new Webhook(s).sign(delivery.event_id, now, delivery.body)).join(' '),
    };
  }

  private async attempt(delivery: Claimed): Promise<void> {
    try {
      const waitFrom = Date.now();
      await this.pace.removeTokens(1, delivery.organization_id);
      if (Date.now() - waitFrom > LEASE_MARGIN_MS / 2) {
        const renewed = await this.sql(`update webhook_delivery set next_attempt_at = clock_timestamp() + make_interval(secs => ?),
            leased_until = clock_timestamp() + make_interval(secs => ?) where id = ? and attempts = ? and status = 'pending' returning id`,
        [this.leaseSeconds, this.leaseSeconds, delivery.id, delivery.attempt]);
        if (!renewed.length) return;
      }
      const pausedUntil = this.paused.get(delivery.endpoint_id) ?? 0;
      if (pausedUntil > Date.now()) {
        await this.giveBack(delivery, pausedUntil - Date.now());
        return;
      }
      this.paused.delete(delivery.endpoint_id);
      const attemptedAt = new Date();
      // A trace per attempt (docs/tracing.md): the http instrumentation's client span nests under it.
      const result = await inSpan('webhook attempt', {
        'webhook.event_type': delivery.type, 'webhook.event_id': delivery.event_id, 'webhook.endpoint_id': delivery.endpoint_id, 'webhook.attempt': delivery.attempt,
      }, async (span) => {
        const sent = await this.sender.send(delivery.url, this.headers(delivery), delivery.body);
        span.setAttribute('webhook.outcome', sent.outcome);
        return sent;
      });
      if (this.closed) return;
      this.metrics.webhookAttempts.inc({ outcome: result.outcome });
      if (result.outcome === 'succeeded') {
        this.metrics.webhookEventsDelivered.inc({ type: delivery.type });
        this.metrics.webhookDeliveryLag.observe(Math.max(0, Date.now() / 1000 - delivery.created_epoch));
      }
      const pauseMs = this.pauseOf(result);
      this.results.push({ ...result, delivery, attemptedAt, retryInMs: this.retryIn(delivery.attempt, result), pauseMs });
      this.answered.add(delivery.id);
      if (pauseMs) this.paused.set(delivery.endpoint_id, Math.max(this.paused.get(delivery.endpoint_id) ?? 0, Date.now() + pauseMs));
      this.queueFlush();
    } catch (err) {
      // Nothing written: the lease runs out and the delivery is attempted again.
      this.log.error({ err: (err as Error).message, delivery: delivery.id }, 'webhooks: an attempt could not be made');
    }
  }

  /** A claim not attempted (its endpoint paused meanwhile): not counted, due again when the pause ends. */
  private async giveBack(delivery: Claimed, inMs: number): Promise<void> {
    await this.sql(`update webhook_delivery set attempts = attempts - 1, leased_until = null,
        next_attempt_at = clock_timestamp() + ? * interval '1 millisecond'
      where id = ? and attempts = ? and status = 'pending'`, [inMs, delivery.id, delivery.attempt]);
  }

  /**
   * Exponential schedule (WEBHOOK_RETRY_SCHEDULE) with up to a fifth of jitter either way, and never before the
   * receiver's own `Retry-After`.
   */
  private retryIn(attempt: number, result: AttemptResult): number | null {
    if (result.outcome === 'succeeded' || result.outcome === 'gone') return null;
    const wait = this.config.retryScheduleMs[attempt - 1];
    if (wait === undefined) return null;
    return Math.max(Math.round(wait * (0.8 + 0.4 * Math.random())), this.pauseOf(result) ?? 0);
  }

  /** How long a throttling answer pauses its endpoint: its `Retry-After`, else the schedule's first wait; bounded. */
  private pauseOf(result: AttemptResult): number | null {
    if (!result.throttle) return null;
    return Math.min(result.throttle.retryAfterMs ?? this.config.retryScheduleMs[0] ?? 0, MAX_PAUSE_MS);
  }

  /** Answers of the same turn of the event loop go together; a record being written takes the next ones after it. */
  private queueFlush(): void {
    if (this.recording || this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      void this.flush();
    });
  }

  private flush(): Promise<void> {
    if (this.recording) return this.flushing;
    const batch = this.results.splice(0);
    if (!batch.length) return this.flushing;
    this.recording = true;
    this.flushing = inSpan('webhook record', { 'webhook.attempts': batch.length }, () => this.record(batch)).then(() => {
      // Their leases are released: room in the shares of the other instances' claims too.
      for (const r of batch) this.answered.delete(r.delivery.id);
    }, (err) => {
      // Their leases run out in their time; until then they count as in flight again (never fewer than the truth).
      for (const r of batch) this.answered.delete(r.delivery.id);
      // The lease runs out and these deliveries are attempted again: at least once.
      this.log.error({ err: (err as Error).message, attempts: batch.length }, 'webhooks: attempts could not be recorded; they will be retried');
    }).finally(() => {
      this.recording = false;
      if (this.results.length) this.queueFlush();
    });
    return this.flushing;
  }

  private async record(batch: Recorded[]): Promise<void> {
    const rows = batch.map((r) => ({
      delivery_id: r.delivery.id, attempt: r.delivery.attempt, outcome: r.outcome, status: r.status, body: r.body, error: r.error,
      duration_ms: r.durationMs, retry_in_ms: r.retryInMs, attempted_at: r.attemptedAt.toISOString(),
    }));
    await this.sql(`with r as (
        select * from jsonb_to_recordset(?::jsonb) as r(delivery_id uuid, attempt int, outcome text, status int, body text,
          error text, duration_ms int, retry_in_ms float8, attempted_at timestamptz)
      ), endpoints as (
        -- The endpoints first, then their deliveries: the order a webhook's deletion takes them in (the endpoint, then
        -- its deliveries by cascade). Otherwise the attempt's foreign key asked for the endpoint only at the end of
        -- the statement, after the delivery's row lock, and a deletion in between deadlocked with it (a 500).
        select ep.id from webhook_endpoint ep
        where ep.id in (select d.endpoint_id from r join webhook_delivery d on d.id = r.delivery_id)
        order by ep.id for key share of ep
      ), attempts as (
        insert into webhook_attempt (delivery_id, endpoint_id, event_id, attempt, attempted_at, duration_ms, outcome, response_status, response_body, error)
        select r.delivery_id, d.endpoint_id, d.event_id, r.attempt, r.attempted_at, r.duration_ms, r.outcome, r.status, r.body, r.error
        from r join webhook_delivery d on d.id = r.delivery_id join endpoints ep on ep.id = d.endpoint_id
      )
      update webhook_delivery d set
        status = case when r.outcome = 'succeeded' then 'succeeded' when r.retry_in_ms is null then 'failed' else 'pending' end,
        next_attempt_at = case when r.retry_in_ms is null then d.next_attempt_at else clock_timestamp() + r.retry_in_ms * interval '1 millisecond' end,
        finished_at = case when r.outcome = 'succeeded' or r.retry_in_ms is null then clock_timestamp() end,
        leased_until = null
      from r, endpoints ep where d.id = r.delivery_id and ep.id = d.endpoint_id and d.attempts = r.attempt and d.status = 'pending'`, [JSON.stringify(rows)]);
    await this.health.record(batch);
  }

  /** Pruning now, not at the hourly pass (webhooks.delivery.test.ts checks retention with it). */
  prune(): Promise<void> {
    return this.housekeeping.prune();
  }

  /**
   * Stops claiming; waits a little for the attempts in flight and writes their results. One still running when the
   * process exits is attempted again once its lease runs out (at least once), rather than holding the shutdown.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.idle.push(resolve)),
        new Promise<void>((resolve) => { timer = setTimeout(resolve, STOP_WAIT_MS); }),
      ]);
      clearTimeout(timer);
    }
    while (this.recording || this.results.length) await (this.recording ? this.flushing : this.flush());
    this.closed = true;
    this.sender.close();
  }
}
