import { Matches } from 'class-validator';
import { Optional } from '../../platform/validation/rules';
import { keyed, keyedList, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';
import { ref } from '../../platform/outputs/output';
import { CreateWebhookInput, UpdateWebhookInput, WebhookAttemptParams, WebhookParams } from './webhook.input';
import { Webhook, WebhookAttempt, WebhookEvent, WebhookSecret } from './webhook.output';
import { ATTEMPTS_PAGE, WebhookService } from './webhook.service';

const tag = 'Webhooks';
const ONE = keyed('webhook', Webhook);
const EVENT = keyed('event', WebhookEvent);
const WITH_SECRET = ref(WebhookSecret);

/** Query of the attempts list. */
class WebhookAttemptsQuery {
  @Optional() @Matches(/^([1-9]\d?|100)$/, { message: `must be a whole number from 1 to ${ATTEMPTS_PAGE.max}` })
  limit?: string;
}

/**
 * Webhooks (issue 26, docs/webhooks.md): an extension beside the 35 operations, for an organization's
 * Administrators. Deliveries are signed per Standard Webhooks; see the delivery loop (delivery.ts).
 */
export const webhookRoutes: RouteDef[] = [
  route({
    operationId: 'listWebhooks', method: 'get', prefix: 'svc', path: '/webhooks', tag,
    summary: 'The webhook endpoints of the organizations where the caller is Administrator.',
    description: 'Every endpoint of every organization where the caller is Administrator, with its state: enabled or not, why delivery disabled it, since when its deliveries fail. Secrets are never listed.',
    success: { status: 200, description: '`{ webhooks }`, oldest first', schema: keyedList('webhooks', Webhook) },
    async handler(sc) {
      return { body: { webhooks: toRest(await new WebhookService(sc).list()) } };
    },
  }),
  route({
    operationId: 'createWebhook', method: 'post', prefix: 'svc', path: '/webhooks', tag,
    summary: 'Creates an endpoint; the answer holds its signing secret, shown this once.',
    description: 'The URL is checked at once (https:// in production; a host resolving to a private, loopback or link-local address is refused) and again at every delivery.',
    body: CreateWebhookInput,
    success: { status: 201, description: '`{ webhook, secret }`', schema: WITH_SECRET },
    errors: [409],
    async handler({ body, ...sc }) {
      return { status: 201, body: toRest(await new WebhookService(sc).create(body)) };
    },
  }),
  route({
    operationId: 'getWebhook', method: 'get', prefix: 'svc', path: '/webhooks/:webhookId', tag,
    summary: 'One endpoint, without its secret.',
    description: 'An endpoint of another organization answers 404, as an unknown one.',
    params: WebhookParams,
    success: { status: 200, description: '`{ webhook }`', schema: ONE },
    async handler({ params, ...sc }) {
      return { body: { webhook: toRest(await new WebhookService(sc).get(params.webhookId)) } };
    },
  }),
  route({
    operationId: 'updateWebhook', method: 'put', prefix: 'svc', path: '/webhooks/:webhookId', tag,
    summary: 'Changes an endpoint\'s URL, event types or description, or enables or disables it; a field left out is unchanged.',
    description: 'A new URL is checked as at creation. `enabled: true` clears the reason and the failing streak, and the deliveries still pending resume; `enabled: false` keeps queueing nothing for it.',
    params: WebhookParams,
    body: UpdateWebhookInput,
    success: { status: 200, description: '`{ webhook }`', schema: ONE },
    async handler({ params, body, ...sc }) {
      return { body: { webhook: toRest(await new WebhookService(sc).update(params.webhookId, body)) } };
    },
  }),
  route({
    operationId: 'deleteWebhook', method: 'delete', prefix: 'svc', path: '/webhooks/:webhookId', tag,
    summary: 'Deletes an endpoint, its pending deliveries and its attempts.',
    description: 'Its deliveries not yet made are dropped; events already delivered stay with the other endpoints.',
    params: WebhookParams,
    success: { status: 204, description: 'No content' },
    async handler({ params, ...sc }) {
      await new WebhookService(sc).remove(params.webhookId);
      return { status: 204, body: null };
    },
  }),
  route({
    operationId: 'rotateWebhookSecret', method: 'post', prefix: 'svc', path: '/webhooks/:webhookId/rotate-secret', tag,
    summary: 'Gives the endpoint a new secret, shown this once; the previous one also signs for WEBHOOK_SECRET_OVERLAP (24 h).',
    description: 'Deliveries carry two signatures (`v1,<new> v1,<previous>`) until the overlap ends, so a receiver can switch to the new secret at its own pace.',
    params: WebhookParams,
    success: { status: 200, description: '`{ webhook, secret }`', schema: WITH_SECRET },
    async handler({ params, ...sc }) {
      return { body: toRest(await new WebhookService(sc).rotate(params.webhookId)) };
    },
  }),
  route({
    operationId: 'sendTestWebhook', method: 'post', prefix: 'svc', path: '/webhooks/:webhookId/test', tag,
    summary: 'Queues a `webhook.test` event for this endpoint; its attempts are listed as any other.',
    description: 'The event (`webhook.test`, with the endpoint\'s and organization\'s ids) goes to this endpoint only, whatever event types it subscribed to; 409 when the endpoint is disabled; 429 past WEBHOOK_MANUAL_SENDS_PER_MINUTE (20) test events and redeliveries to the endpoint in a minute.',
    params: WebhookParams,
    success: { status: 202, description: '`{ event }`: queued', schema: EVENT },
    errors: [409, 429],
    async handler({ params, ...sc }) {
      return { status: 202, body: { event: toRest(await new WebhookService(sc).sendTest(params.webhookId)) } };
    },
  }),
  route({
    operationId: 'listWebhookAttempts', method: 'get', prefix: 'svc', path: '/webhooks/:webhookId/attempts', tag,
    summary: `The endpoint's latest delivery attempts, newest first (${ATTEMPTS_PAGE.default}, or \`limit\` up to ${ATTEMPTS_PAGE.max}); kept for WEBHOOK_RETENTION (30 days).`,
    description: 'Each attempt with its outcome, the answer\'s status and the first 512 characters of its body, and how long it took.',
    params: WebhookParams,
    query: WebhookAttemptsQuery,
    success: { status: 200, description: '`{ attempts }`', schema: keyedList('attempts', WebhookAttempt) },
    async handler({ params, query, ...sc }) {
      const attempts = await new WebhookService(sc).attempts(params.webhookId, query.limit ? Number(query.limit) : undefined);
      return { body: { attempts: toRest(attempts) } };
    },
  }),
  route({
    operationId: 'redeliverWebhookAttempt', method: 'post', prefix: 'svc', path: '/webhooks/:webhookId/attempts/:attemptId/redeliver', tag,
    summary: 'Sends the attempt\'s event to the endpoint again, now, with the same `webhook-id`.',
    description: 'The delivery is queued again now (its attempts go on counting), whether it succeeded, failed or is still waiting; 409 when the endpoint is disabled; 429 past WEBHOOK_MANUAL_SENDS_PER_MINUTE (20) test events and redeliveries to the endpoint in a minute.',
    params: WebhookAttemptParams,
    success: { status: 202, description: '`{ event }`: queued', schema: EVENT },
    errors: [409, 429],
    async handler({ params, ...sc }) {
      return { status: 202, body: { event: toRest(await new WebhookService(sc).redeliver(params.webhookId, params.attemptId)) } };
    },
  }),
];
