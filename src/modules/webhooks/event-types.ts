/**
 * The events an endpoint may subscribe to (docs/webhooks.md gives each payload). They are made by the database's
 * triggers (src/migrations/Migration20270301000000_webhooks.ts), whoever writes; `webhook.test` is sent only by the
 * "send a test event" operation, to that endpoint, whatever it subscribed to.
 */
export const WEBHOOK_EVENT_TYPES = [
  'contractor.invited',
  'contractor.downloaded',
  'contractor.intention_changed',
  'contractor.answered',
  'contractor.declined',
  'template.created',
  'template.closed',
  'template.deleted',
  'project.archived',
] as const;

export const TEST_EVENT_TYPE = 'webhook.test';
