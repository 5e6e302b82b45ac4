import 'reflect-metadata';
import type { Options } from '@mikro-orm/postgresql';
import { ENTITIES } from './src/modules/entities';
import { MIGRATIONS } from './src/migrations';
import type { DatabaseLimits } from './src/platform/config';
import type { PoolRole, SessionSettings } from './src/platform/database/limits';
import { ormConfig as configOf, type DataModel } from './src/platform/database/orm-config';

/** This service's data model, which the entry points hand to src/platform/database (platform imports no module). */
export const DATA_MODEL: DataModel = { entities: ENTITIES, migrations: MIGRATIONS };

/** The ORM configuration of DATA_MODEL for a database URL (src/platform/database/orm-config.ts). */
export function ormConfig(clientUrl: string, overrides?: Partial<Options>, limits?: DatabaseLimits, sessionSettings?: SessionSettings, role?: PoolRole): Options {
  return configOf(DATA_MODEL, clientUrl, overrides, limits, sessionSettings, role);
}
