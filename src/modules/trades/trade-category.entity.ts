import { Entity, Enum, Index, ManyToOne, Property, Unique, type Rel } from '@mikro-orm/core';
import { BaseEntity } from '../../platform/database/base.entity';

/** A category of trades, as other platforms classify them. */
@Entity({ tableName: 'trade_category' })
export class TradeCategory extends BaseEntity {
  @Property({ type: 'string', unique: true })
  code!: string;

  @Property({ type: 'string' })
  name!: string;
}

export enum TradeMappingSource {
  /** key: trade name, lowercased and without accents */
  NAME = 'NAME',
  /** key: service trade id (a trade-list trade UUID) */
  SVC = 'SVC',
  /** key: partner-platform trade id */
  PARTNER = 'PARTNER',
}

/** Maps a trade name, service trade id or partner trade id to a category. */
@Entity({ tableName: 'trade_category_mapping' })
@Unique({ properties: ['source', 'key', 'category'] })
@Index({ properties: ['source', 'key'] })
export class TradeCategoryMapping extends BaseEntity {
  @Enum({ items: () => TradeMappingSource })
  source!: TradeMappingSource;

  @Property({ type: 'string' })
  key!: string;

  @ManyToOne(() => TradeCategory, { index: true, deleteRule: 'cascade' })
  category!: Rel<TradeCategory>;
}
