import type { Logger } from 'pino';
import type { WebhooksConfig } from '../../platform/config';
import type { Metrics } from '../../platform/metrics';
import { formatTimestamp } from '../../platform/values/time';
import type { Query } from './query';
import type { AttemptOutcome } from './send';

// An endpoint's health, judged on the attempts the delivery loop records (docs/webhooks.md, "Retries" and
// "Fairness"): its failing streak (`failing_since`) and its disabling, at once by a 410, or after
// WEBHOOK_DISABLE_AFTER of failures only; its circuit breaker's count of failures in a row; its pause after a
// throttling answer.

/** An attempt as the health reads it: the endpoint's streak as it was when the delivery was claimed. */
export interface EndpointAttempt {
  delivery: { endpoint_id: string; failing_since: Date | null; consecutive_failures: number };
  outcome: AttemptOutcome;
  attemptedAt: Date;
  /** A throttling answer pauses the endpoint this long. */
  pauseMs: number | null;
}

/** What a batch changes of an endpoint's breaker and pause. */
interface BreakerChange {
  endpoint_id: string;
  /** Failures to add to the count; null: a success reset it. */
  failures: number | null;
  pause_ms: number | null;
}

export class EndpointHealth {
  constructor(
    private readonly sql: Query,
    private readonly config: WebhooksConfig,
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {}

  /** After the batch's attempts are written: one judgement per endpoint, however many of its attempts the batch holds. */
  async record(batch: EndpointAttempt[]): Promise<void> {
    const byEndpoint = new Map<string, EndpointAttempt[]>();
    const breakers: BreakerChange[] = [];
    for (const r of batch) {
      const results = byEndpoint.get(r.delivery.endpoint_id);
      if (results) results.push(r);
      else byEndpoint.set(r.delivery.endpoint_id, [r]);
    }
    for (const [endpointId, results] of byEndpoint) {
      const gone = results.find((r) => r.outcome === 'gone');
      const succeeded = results.some((r) => r.outcome === 'succeeded');
      const failingSince = results[0].delivery.failing_since;
      const pauses = results.map((r) => r.pauseMs ?? 0);
      const pauseMs = Math.max(...pauses) > 0 ? Math.max(...pauses) : null;
      if (!succeeded || results[0].delivery.consecutive_failures > 0 || pauseMs) {
        breakers.push({ endpoint_id: endpointId, failures: succeeded ? null : results.length, pause_ms: pauseMs });
      }
      if (gone) {
        await this.disable(endpointId, 'gone', `The endpoint answered 410 Gone at ${formatTimestamp(gone.attemptedAt)}`);
      } else if (succeeded) {
        if (failingSince) await this.sql('update webhook_endpoint set failing_since = null where id = ?', [endpointId]);
      } else if (!failingSince) {
        await this.sql('update webhook_endpoint set failing_since = coalesce(failing_since, ?) where id = ?', [results[0].attemptedAt, endpointId]);
      } else if (Date.now() - failingSince.getTime() >= this.config.disableAfterMs) {
        await this.disable(endpointId, 'failing', `Every delivery failed since ${formatTimestamp(failingSince)}`);
      }
    }
    if (breakers.length) await this.breakers(breakers);
  }

  /** One statement for the batch's endpoints whose breaker count or pause changes (none while all goes well). */
  private breakers(changes: BreakerChange[]): Promise<unknown> {
    return this.sql(`update webhook_endpoint ep set
        consecutive_failures = case when c.failures is null then 0 else ep.consecutive_failures + c.failures end,
        paused_until = case when c.pause_ms is null then ep.paused_until
          else greatest(ep.paused_until, clock_timestamp() + c.pause_ms * interval '1 millisecond') end
      from jsonb_to_recordset(?::jsonb) as c(endpoint_id uuid, failures int, pause_ms float8)
      where ep.id = c.endpoint_id`, [JSON.stringify(changes)]);
  }

  private async disable(endpointId: string, reason: 'gone' | 'failing', text: string): Promise<void> {
    const rows = await this.sql(`update webhook_endpoint set disabled_at = clock_timestamp(), disabled_reason = ?, updated_at = clock_timestamp()
      where id = ? and disabled_at is null returning id`, [text, endpointId]);
    if (rows.length) {
      this.metrics.webhookEndpointsDisabled.inc({ reason });
      this.log.warn({ endpoint: endpointId, reason: text }, 'webhooks: endpoint disabled');
    }
  }
}
