import 'reflect-metadata';
import type { Options } from '@mikro-orm/postgresql';
import { ENTITIES } from './src/modules/entities';
import { MIGRATIONS } from './src/migrations';
import { ormConfig as configOf, type DataModel } from './src/platform/database/orm-config';

/** This service's data model, which the entry points hand to src/platform/database (platform imports no module). */
export const DATA_MODEL: DataModel = { entities: ENTITIES, migrations: MIGRATIONS };

/** src/platform/database/orm-config.ts's arguments after the model. */
type Settings = Parameters<typeof configOf> extends [DataModel, ...infer Rest] ? Rest : never;

/** The ORM configuration of DATA_MODEL for a database URL (the CLI's, the tests' and the benches' way in). */
export function ormConfig(...settings: Settings): Options {
  return configOf(DATA_MODEL, ...settings);
}
