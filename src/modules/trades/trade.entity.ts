import { Property } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';

/** What a trade (lot) is, in a trade list or in a project: its number, name and short name. */
export abstract class TradeEntity extends LegacyEntity {
  @Property({ type: 'string' })
  number!: string;

  @Property({ type: 'string' })
  name!: string;

  @Property({ type: 'string' })
  shortName!: string;
}
