import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_initial } from './Migration20261122000000_initial';

/** Every migration, in order. `npm run db:migration:create` writes a new file; add it here. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
];
