import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { MigrationObject } from '@mikro-orm/core';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { DatabaseLimits } from '../config';
import { PRIMARY, poolOptions, type PoolRole, type SessionSettings } from './limits';

/**
 * The service's entities and migrations. The entry points name them (mikro-orm.config.ts), so that platform
 * imports no module.
 */
export interface DataModel {
  entities: NonNullable<Options['entities']>;
  migrations: MigrationObject[];
}

/**
 * application_name of this process's database sessions (unique per process, across hosts): how the
 * shutdown finds the sessions it ends (admin.ts), and how an operator tells instances apart.
 */
export const SESSION_NAME = `tender-bff ${process.pid} ${randomBytes(4).toString('hex')}`;

/**
 * The ORM configuration of `model` for a database URL; every entry point (server, CLI, tests) goes through here.
 * `limits` bounds every wait of the request pool; leave it out for migrations and maintenance commands.
 * `sessionSettings` says where the request pool's server settings go (src/platform/database/limits.ts): in the startup
 * packet on a connection to PostgreSQL itself, after each BEGIN through a transaction pooler. `role` says what
 * the pool's commits mean for read-your-writes (src/platform/database/limits.ts): the primary's, or a replica's.
 */
export function ormConfig(model: DataModel, clientUrl: string, overrides: Partial<Options> = {}, limits?: DatabaseLimits, sessionSettings: SessionSettings = 'startup', role: PoolRole = PRIMARY): Options {
  const waits = poolOptions(limits, sessionSettings, role);
  return defineConfig({
    clientUrl,
    entities: model.entities,
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    migrations: {
      migrationsList: model.migrations,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
      tableName: 'mikro_orm_migrations',
    },
    // rate_limit belongs to rate-limiter-flexible (src/platform/http/rate-limiters.ts), service_secret to file-url.ts's SQL,
    // the *_statistics tables to the triggers of Migration20261220000000_statistics.
    schemaGenerator: { skipTables: ['rate_limit', 'service_secret', 'document_statistics', 'template_statistics', 'project_statistics', 'idempotency_key',
      'webhook_endpoint', 'webhook_event', 'webhook_delivery', 'webhook_attempt'] },
    pool: waits.pool,
    // jit off (in waits.connection): short OLTP and aggregate queries lose more to JIT compilation than they gain.
    driverOptions: {
      connection: { ...waits.connection, application_name: SESSION_NAME },
      // A failed statement's message quotes its text with the placeholders, not the bound values (secrets: bound-query.ts).
      compileSqlOnError: false,
      // knex prints its own messages with console.log; the errors behind them reach our JSON logs anyway.
      log: { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined },
    },
    ...overrides,
  });
}
