import { Entity, ManyToOne, Unique, type Rel } from '@mikro-orm/core';
import { TradeEntity } from './trade.entity';
import { TradeList } from './trade-list.entity';

/** One trade of a trade list. Its id is the "service trade identifier" of the trade category mapping. */
@Entity({ tableName: 'trade_list_trade' })
@Unique({ properties: ['tradeList', 'number'] })
export class TradeListTrade extends TradeEntity {
  @ManyToOne(() => TradeList, { index: true, deleteRule: 'cascade' })
  tradeList!: Rel<TradeList>;
}
