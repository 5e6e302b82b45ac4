import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122031644 } from './Migration20261122031644';

/** Every migration, in order. `npm run db:migration:create` writes a new file; add it here. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122031644', class: Migration20261122031644 },
];
