import { OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { newLegacyId } from './legacy-id';
import { TIMESTAMPTZ } from './timestamp.type';

/** Columns every table has: a UUID key and creation / update times. */
export abstract class BaseEntity<Optional = never> {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | Optional;

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ ...TIMESTAMPTZ })
  createdAt: Date = new Date();

  @Property({ ...TIMESTAMPTZ, onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/** A record legacy consumers can address: it carries a 17-character legacy identifier. */
export abstract class LegacyEntity<Optional = never> extends BaseEntity<Optional | 'legacyId'> {
  @Property({ type: 'string', length: 17, unique: true })
  legacyId: string = newLegacyId();
}
