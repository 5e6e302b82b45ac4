import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { boundQuery } from '../../platform/database/bound-query';
import { pageOf, type PageRange } from '../../platform/database/pagination';
import { ownedBy } from '../../platform/database/tenancy';
import { rowDate, type PgTimestamp } from '../../platform/database/rows';
import { ConflictError, NotFoundError, TooManyRequestsError, ValidationError } from '../../platform/errors/errors';
import type { ServiceContext } from '../../platform/service-context';
import { canSeeOrganization } from '../access';
import { TEST_EVENT_TYPE } from './event-types';
import type { CreateWebhookInput, UpdateWebhookInput } from './webhook.input';
import type { Webhook, WebhookAttempt, WebhookEvent, WebhookSecret } from './webhook.output';
import { TargetRefused, checkTarget, urlProblem } from './target';
import { WEBHOOK_CHANNEL } from '../../platform/events/change-event';

type EndpointRow = {
  id: string;
  organization_id: string;
  url: string;
  description: string;
  event_types: string[];
  disabled_at: PgTimestamp;
  disabled_reason: string | null;
  failing_since: PgTimestamp;
  previous_secret_expires_at: PgTimestamp;
  created_at: string;
  updated_at: string;
};

const ENDPOINT_COLUMNS = `id, organization_id, url, description, event_types, disabled_at, disabled_reason, failing_since,
  case when previous_secret_expires_at > clock_timestamp() then previous_secret_expires_at end as previous_secret_expires_at, created_at, updated_at`;

/** The one row mapper of an endpoint. */
const webhookOf = (em: EntityManager, row: EndpointRow): Webhook => ({
  id: row.id,
  organizationId: row.organization_id,
  url: row.url,
  description: row.description,
  eventTypes: row.event_types,
  enabled: row.disabled_at === null,
  disabledAt: rowDate(row.disabled_at),
  disabledReason: row.disabled_reason,
  failingSince: rowDate(row.failing_since),
  previousSecretExpiresAt: rowDate(row.previous_secret_expires_at),
  createdAt: rowDate(row.created_at),
  updatedAt: rowDate(row.updated_at),
});

interface EventRow {
  id: string;
  type: string;
  created_at: string;
}

/** The one row mapper of a queued event. */
const eventOf = (em: EntityManager, row: EventRow): WebhookEvent => ({ id: row.id, type: row.type, createdAt: rowDate(row.created_at) });

/** The event types as a PostgreSQL array literal, each once (they are checked against WEBHOOK_EVENT_TYPES). */
const typesArray = (types: string[]) => `{${[...new Set(types)].join(',')}}`;

/** Wakes the delivery loops at the transaction's commit (the trigger's way, for what the service queues itself). */
const wakeDelivery = (em: EntityManager) => boundQuery(em, 'select pg_logical_emit_message(true, ?, \'\')', [WEBHOOK_CHANNEL]);

/** Standard Webhooks' secret format: `whsec_` and the base64 of the HMAC key (24 random bytes). */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** An endpoint's attempts: 50 a page, at most 100; GraphQL's `first` out of range is taken as the nearest (REST's `limit` refuses it). */
export const ATTEMPTS_PAGE: PageRange = { default: 50, max: 100, outside: 'clamp' };

/**
 * Webhook endpoints of the caller's Administrator organizations (docs/webhooks.md): an endpoint of another
 * organization answers as an unknown one. Every statement goes through boundQuery: the secrets it writes are bound
 * parameters, never in a statement's text (pg_stat_activity, the server's logs, error messages).
 */
export class WebhookService {
  constructor(private readonly sc: ServiceContext) {}

  private get settings() {
    return this.sc.config.webhooks;
  }

  private async endpointRow(em: EntityManager, id: string, lock = false): Promise<EndpointRow> {
    const rows = await boundQuery<EndpointRow>(em, `select ${ENDPOINT_COLUMNS} from webhook_endpoint
      where id = ? and ${ownedBy('organization_id', this.sc.caller.adminOrganizationIds)}${lock ? ' for update' : ''}`, [id.toLowerCase()]);
    if (!rows.length) throw new NotFoundError('Webhook not found');
    return rows[0];
  }

  /**
   * Refuses a URL that cannot be delivered to under this configuration (400 on `url`). A refused target is told in
   * TargetRefused's one message; what its host resolved to, or why it did not, goes to the log only.
   */
  private async checkUrl(url: string): Promise<void> {
    const problem = urlProblem(url, this.settings);
    if (problem) throw new ValidationError([{ field: 'url', message: problem }]);
    try {
      await checkTarget(url, this.settings);
    } catch (err) {
      if (!(err instanceof TargetRefused)) throw err;
      this.sc.log?.warn({ target: err.detail }, 'webhooks: a URL was refused: it does not reach a public address');
      throw new ValidationError([{ field: 'url', message: err.message }]);
    }
  }

  async list(): Promise<Webhook[]> {
    const rows = await boundQuery<EndpointRow>(this.sc.em, `select ${ENDPOINT_COLUMNS} from webhook_endpoint
      where ${ownedBy('organization_id', this.sc.caller.adminOrganizationIds)} order by created_at, id`);
    return rows.map((row) => webhookOf(this.sc.em, row));
  }

  async get(id: string): Promise<Webhook> {
    return webhookOf(this.sc.em, await this.endpointRow(this.sc.em, id));
  }

  async create(input: CreateWebhookInput): Promise<WebhookSecret> {
    if (!canSeeOrganization(this.sc, input.organizationId)) throw new NotFoundError('Organization not found');
    await this.checkUrl(input.url);
    const secret = newSecret();
    const row = await this.sc.em.transactional(async (em) => {
      // One creation at a time per organization, so that the limit holds under concurrent requests.
      await boundQuery(em, 'select id from organization where id = ? for update', [input.organizationId.toLowerCase()]);
      const [{ count }] = await boundQuery<{ count: number }>(em,
        `select count(*)::int as count from webhook_endpoint where ${ownedBy('organization_id', [input.organizationId])}`);
      if (count >= this.settings.maxEndpointsPerOrganization) {
        throw new ConflictError(`An organization has at most ${this.settings.maxEndpointsPerOrganization} webhook endpoints`);
      }
      const [created] = await boundQuery<EndpointRow>(em, `insert into webhook_endpoint (id, organization_id, url, description, event_types, secret)
        values (?, ?, ?, ?, ?::text[], ?) returning ${ENDPOINT_COLUMNS}`,
      [randomUUID(), input.organizationId.toLowerCase(), input.url, input.description ?? '', typesArray(input.eventTypes), secret]);
      return created;
    });
    return { webhook: webhookOf(this.sc.em, row), secret };
  }

  async update(id: string, input: UpdateWebhookInput): Promise<Webhook> {
    if (input.url != null) await this.checkUrl(input.url);
    return this.sc.em.transactional(async (em) => {
      const current = await this.endpointRow(em, id, true);
      const enable = input.enabled === true && current.disabled_at !== null;
      const disable = input.enabled === false && current.disabled_at === null;
      const [row] = await boundQuery<EndpointRow>(em, `update webhook_endpoint set
          url = coalesce(?, url), description = coalesce(?, description), event_types = coalesce(?::text[], event_types),
          disabled_at = case when ? then null when ? then clock_timestamp() else disabled_at end,
          disabled_reason = case when ? then null when ? then 'Disabled by its organization' else disabled_reason end,
          failing_since = case when ? then null else failing_since end,
          updated_at = clock_timestamp()
        where id = ? returning ${ENDPOINT_COLUMNS}`,
      [input.url ?? null, input.description ?? null, input.eventTypes ? typesArray(input.eventTypes) : null,
        enable, disable, enable, disable, enable, current.id]);
      if (enable) await wakeDelivery(em);
      return webhookOf(em, row);
    });
  }

  async remove(id: string): Promise<void> {
    await this.sc.em.transactional(async (em) => {
      const current = await this.endpointRow(em, id, true);
      await boundQuery(em, 'delete from webhook_endpoint where id = ?', [current.id]);
    });
  }

  /** A new secret; the one it replaces signs too for WEBHOOK_SECRET_OVERLAP (receivers verify with either). */
  async rotate(id: string): Promise<WebhookSecret> {
    const secret = newSecret();
    const row = await this.sc.em.transactional(async (em) => {
      const current = await this.endpointRow(em, id, true);
      const [updated] = await boundQuery<EndpointRow>(em, `update webhook_endpoint set previous_secret = secret,
          previous_secret_expires_at = clock_timestamp() + make_interval(secs => ?), secret = ?, updated_at = clock_timestamp()
        where id = ? returning ${ENDPOINT_COLUMNS}`, [this.settings.secretOverlapMs / 1000, secret, current.id]);
      return updated;
    });
    return { webhook: webhookOf(this.sc.em, row), secret };
  }

  /**
   * Counts a test event or a redelivery against the endpoint's WEBHOOK_MANUAL_SENDS_PER_MINUTE, in the transaction that
   * holds its row (exact across instances); past it, 429 until the minute ends, and the transaction writes nothing.
   */
  private async countManualSend(em: EntityManager, endpointId: string): Promise<void> {
    const [row] = await boundQuery<{ sends: number; retry_after: number }>(em, `update webhook_endpoint set
        manual_sends = case when manual_window_started_at > clock_timestamp() - interval '1 minute' then manual_sends + 1 else 1 end,
        manual_window_started_at = case when manual_window_started_at > clock_timestamp() - interval '1 minute'
          then manual_window_started_at else clock_timestamp() end
      where id = ? returning manual_sends as sends,
        ceil(extract(epoch from manual_window_started_at + interval '1 minute' - clock_timestamp()))::int as retry_after`, [endpointId]);
    const limit = this.settings.manualSendsPerMinute;
    if (row.sends > limit) {
      throw new TooManyRequestsError(`At most ${limit} test events and redeliveries per webhook per minute`, Math.max(1, row.retry_after));
    }
  }

  /** Queues a `webhook.test` event for this endpoint only, whatever types it subscribed to. */
  async sendTest(id: string): Promise<WebhookEvent> {
    return this.sc.em.transactional(async (em) => {
      const endpoint = await this.endpointRow(em, id, true);
      if (endpoint.disabled_at) throw new ConflictError('The webhook is disabled: enable it before sending a test event');
      await this.countManualSend(em, endpoint.id);
      const [event] = await boundQuery<EventRow>(em, `insert into webhook_event (organization_id, type, payload)
        select ?::uuid, ?::text, jsonb_build_object('type', ?::text, 'timestamp', webhook_time(clock_timestamp()),
          'data', jsonb_build_object('webhook_id', ?::uuid, 'organization_id', ?::uuid))
        returning id, type, created_at`, [endpoint.organization_id, TEST_EVENT_TYPE, TEST_EVENT_TYPE, endpoint.id, endpoint.organization_id]);
      await boundQuery(em, 'insert into webhook_delivery (event_id, endpoint_id) values (?, ?)', [event.id, endpoint.id]);
      await wakeDelivery(em);
      return eventOf(em, event);
    });
  }

  /** The endpoint's latest attempts, newest first. */
  async attempts(id: string, first?: number | null): Promise<WebhookAttempt[]> {
    const endpoint = await this.endpointRow(this.sc.em, id);
    const rows = await boundQuery<{
      id: string; event_id: string; type: string; attempt: number; attempted_at: string; outcome: string;
      response_status: number | null; response_body: string | null; error: string | null; duration_ms: number;
    }>(this.sc.em, `select a.id, a.event_id, e.type, a.attempt, a.attempted_at, a.outcome, a.response_status, a.response_body, a.error, a.duration_ms
      from webhook_attempt a join webhook_event e on e.id = a.event_id
      where a.endpoint_id = ? order by a.attempted_at desc, a.id limit ?`, [endpoint.id, pageOf(ATTEMPTS_PAGE, first)]);
    return rows.map((r) => ({
      id: r.id, eventId: r.event_id, eventType: r.type, attempt: r.attempt, attemptedAt: rowDate(r.attempted_at), outcome: r.outcome,
      responseStatus: r.response_status, responseBody: r.response_body, error: r.error, durationMs: r.duration_ms,
    }));
  }

  /** Sends the attempt's event to the endpoint again, now, with the same `webhook-id`, whatever became of it. */
  async redeliver(id: string, attemptId: string): Promise<WebhookEvent> {
    return this.sc.em.transactional(async (em) => {
      const endpoint = await this.endpointRow(em, id, true);
      if (endpoint.disabled_at) throw new ConflictError('The webhook is disabled: enable it before redelivering');
      await this.countManualSend(em, endpoint.id);
      const rows = await boundQuery<EventRow>(em, `update webhook_delivery d
          set status = 'pending', next_attempt_at = clock_timestamp(), finished_at = null
        from webhook_attempt a, webhook_event e
        where a.id = ? and a.endpoint_id = ? and d.id = a.delivery_id and e.id = d.event_id
        returning e.id, e.type, e.created_at`, [attemptId.toLowerCase(), endpoint.id]);
      if (!rows.length) throw new NotFoundError('Attempt not found');
      await wakeDelivery(em);
      return eventOf(em, rows[0]);
    });
  }
}
