import { Entity, ManyToOne, Property, type Rel } from '@mikro-orm/core';
import { TradeEntity } from './trade.entity';
import { Project } from '../projects/project.entity';
import { TradeListTrade } from './trade-list-trade.entity';

/** A trade (lot) of a project, copied from the project's trade list or added later. */
@Entity({ tableName: 'project_trade' })
export class ProjectTrade extends TradeEntity {
  @ManyToOne(() => Project, { index: true, deleteRule: 'cascade' })
  project!: Rel<Project>;


  @Property({ type: 'text', nullable: true })
  comment?: string | null;

  /** The trade-list trade this one was copied from, if any. */
  @ManyToOne(() => TradeListTrade, { nullable: true, index: true, deleteRule: 'set null' })
  sourceTrade?: Rel<TradeListTrade> | null;
}
