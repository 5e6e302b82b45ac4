import { Entity, ManyToOne, Property, Unique, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { TradeList } from './trade-list.entity';

/** One trade of a trade list. Its id is the "service trade identifier" of the trade category mapping. */
@Entity({ tableName: 'trade_list_trade' })
@Unique({ properties: ['tradeList', 'number'] })
export class TradeListTrade extends LegacyEntity {
  @ManyToOne(() => TradeList, { index: true, deleteRule: 'cascade' })
  tradeList!: Rel<TradeList>;

  @Property({ type: 'string' })
  number!: string;

  @Property({ type: 'string' })
  name!: string;

  @Property({ type: 'string' })
  shortName!: string;
}
