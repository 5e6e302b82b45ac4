import { Collection, Entity, ManyToOne, OneToMany, Property, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Organization } from '../organizations/organization.entity';
import { TradeListTrade } from './trade-list-trade.entity';

/** A reusable catalogue of trades: public (no organization) or private to one organization. */
@Entity({ tableName: 'trade_list' })
export class TradeList extends LegacyEntity {
  @Property({ type: 'string' })
  name!: string;

  @ManyToOne(() => Organization, { nullable: true, index: true, deleteRule: 'cascade' })
  organization?: Rel<Organization> | null;

  @OneToMany(() => TradeListTrade, (t) => t.tradeList)
  trades = new Collection<TradeListTrade>(this);
}
