import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_initial } from './Migration20261122000000_initial';
import { Migration20261201000000_rate_limit } from './Migration20261201000000_rate_limit';
import { Migration20261210000000_service_secret } from './Migration20261210000000_service_secret';
import { Migration20261220000000_statistics } from './Migration20261220000000_statistics';
import { Migration20261230000000_change_events } from './Migration20261230000000_change_events';
import { Migration20261231000000_statistics_offer_version } from './Migration20261231000000_statistics_offer_version';
import { Migration20270105000000_caller_changes } from './Migration20270105000000_caller_changes';
import { Migration20270110000000_caller_truncate } from './Migration20270110000000_caller_truncate';
import { Migration20270120000000_version_template } from './Migration20270120000000_version_template';
import { Migration20270201000000_idempotency_keys } from './Migration20270201000000_idempotency_keys';
import { Migration20270205000000_derived_data } from './Migration20270205000000_derived_data';
import { Migration20270301000000_webhooks } from './Migration20270301000000_webhooks';
import { Migration20270315000000_change_messages } from './Migration20270315000000_change_messages';
import { Migration20270401000000_webhook_fairness } from './Migration20270401000000_webhook_fairness';

/** Every migration, in order. `npm run db:migration:create` writes a new file; add it here. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
  { name: 'Migration20261201000000_rate_limit', class: Migration20261201000000_rate_limit },
  { name: 'Migration20261210000000_service_secret', class: Migration20261210000000_service_secret },
  { name: 'Migration20261220000000_statistics', class: Migration20261220000000_statistics },
  { name: 'Migration20261230000000_change_events', class: Migration20261230000000_change_events },
  { name: 'Migration20261231000000_statistics_offer_version', class: Migration20261231000000_statistics_offer_version },
  { name: 'Migration20270105000000_caller_changes', class: Migration20270105000000_caller_changes },
  { name: 'Migration20270110000000_caller_truncate', class: Migration20270110000000_caller_truncate },
  { name: 'Migration20270120000000_version_template', class: Migration20270120000000_version_template },
  { name: 'Migration20270201000000_idempotency_keys', class: Migration20270201000000_idempotency_keys },
  { name: 'Migration20270205000000_derived_data', class: Migration20270205000000_derived_data },
  { name: 'Migration20270301000000_webhooks', class: Migration20270301000000_webhooks },
  { name: 'Migration20270315000000_change_messages', class: Migration20270315000000_change_messages },
  { name: 'Migration20270401000000_webhook_fairness', class: Migration20270401000000_webhook_fairness },
];
