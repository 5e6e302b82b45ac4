import type { Logger } from 'pino';
import type { WebhooksConfig } from '../../platform/config';
import type { Metrics } from '../../platform/metrics';
import type { Query } from './query';

// What the delivery loop does beside delivering, at its polls: the backlog gauges for Metrics
// (`webhook_deliveries_due`, `webhook_oldest_due_seconds`), and the pruning of what is past WEBHOOK_RETENTION
// (docs/webhooks.md, "Retention").

/** The backlog gauges are sampled at most this often. */
const SAMPLE_MS = 10000;
/** Finished rows past retention are deleted this often by each instance (idempotent, cheap with the indexes). */
const PRUNE_MS = 3600000;

export class WebhookHousekeeping {
  private lastSample = 0;
  private lastPrune = 0;

  constructor(
    private readonly sql: Query,
    private readonly config: WebhooksConfig,
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {}

  start(): void {
    this.lastPrune = Date.now() - PRUNE_MS + 60000;
  }

  /** The backlog gauges, and the pruning of what is past retention. Failures only wait for the next poll. */
  async run(): Promise<void> {
    const now = Date.now();
    try {
      if (now - this.lastSample >= Math.max(this.config.pollIntervalMs, SAMPLE_MS)) {
        this.lastSample = now;
        const [row] = await this.sql<{ due: number; oldest: number | null }>(`select count(*)::int as due,
            extract(epoch from clock_timestamp() - min(d.next_attempt_at))::float8 as oldest
          from webhook_delivery d join webhook_endpoint ep on ep.id = d.endpoint_id and ep.disabled_at is null
          where d.status = 'pending' and d.next_attempt_at <= clock_timestamp()`);
        this.metrics.webhookDue.set(row.due);
        this.metrics.webhookOldestDue.set(row.oldest ?? 0);
      }
      if (now - this.lastPrune >= PRUNE_MS) {
        this.lastPrune = now;
        await this.prune();
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'webhooks: housekeeping failed; trying again later');
    }
  }

  /** Attempts, finished deliveries and their events past WEBHOOK_RETENTION; deliveries of disabled endpoints too. */
  async prune(): Promise<void> {
    const seconds = this.config.retentionMs / 1000;
    await this.sql(`delete from webhook_attempt where attempted_at < clock_timestamp() - make_interval(secs => ?)`, [seconds]);
    await this.sql(`delete from webhook_delivery d where d.created_at < clock_timestamp() - make_interval(secs => ?)
      and (d.status <> 'pending' or exists (select 1 from webhook_endpoint ep where ep.id = d.endpoint_id and ep.disabled_at is not null))`, [seconds]);
    await this.sql(`delete from webhook_event e where e.created_at < clock_timestamp() - make_interval(secs => ?)
      and not exists (select 1 from webhook_delivery d where d.event_id = e.id)`, [seconds]);
  }
}
