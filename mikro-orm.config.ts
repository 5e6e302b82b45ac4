import 'reflect-metadata';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from './src/entities';
import { MIGRATIONS } from './src/migrations';

/** The ORM configuration for a database URL; every entry point (server, CLI, tests) goes through here. */
export function ormConfig(clientUrl: string, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    migrations: {
      migrationsList: MIGRATIONS,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
      tableName: 'mikro_orm_migrations',
    },
    // rate_limit belongs to rate-limiter-flexible (src/rate-limiters.ts), not to an entity.
    schemaGenerator: { skipTables: ['rate_limit'] },
    pool: { min: 0, max: 10, acquireTimeoutMillis: 5000 },
    // Fail fast when the server is down, so readiness and requests answer 503 instead of hanging.
    // jit off: short OLTP and aggregate queries lose more to JIT compilation than they gain.
    driverOptions: {
      connection: { connectionTimeoutMillis: 3000, options: '-c jit=off' },
      // knex prints its own messages with console.log; the errors behind them reach our JSON logs anyway.
      log: { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined },
    },
    ...overrides,
  });
}

export default ormConfig(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
