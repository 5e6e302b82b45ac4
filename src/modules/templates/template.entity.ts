import { DecimalType, Entity, Enum, Index, ManyToOne, Property, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Project, RESPONSE_TYPES, type ResponseType } from '../projects/project.entity';
import { ProjectTrade } from '../trades/project-trade.entity';
import type { Document } from '../documents/document.entity';
import { TIMESTAMPTZ } from '../../platform/database/timestamp.type';

/**
 * A DPGF template: the consultation of one trade. A trade has one template; further templates of the same
 * trade are its slices (`parent` set). Each template or slice has its own budget and invited contractors.
 */
@Entity({ tableName: 'template' })
@Index({ properties: ['project', 'createdAt'] })
// One main template per trade; slices hang under it.
@Index({ name: 'template_one_main_per_trade', expression: 'create unique index "template_one_main_per_trade" on "template" ("trade_id") where "parent_id" is null' })
export class Template extends LegacyEntity<
  'isSlice' | 'budget' | 'versionSaved' | 'itemisedSheetVersion' | 'itemisedSheetIsDraft' |
  'itemisedSheetHasAdditionalServices' | 'foldOpened'
> {
  @ManyToOne(() => Project, { index: true, deleteRule: 'cascade' })
  project!: Rel<Project>;

  @ManyToOne(() => ProjectTrade, { index: true })
  trade!: Rel<ProjectTrade>;

  /** The main template of the trade, for a slice. */
  @ManyToOne(() => Template, { nullable: true, index: true, deleteRule: 'cascade' })
  parent?: Rel<Template> | null;

  @Property({ type: 'boolean' })
  isSlice: boolean = false;

  @Property({ type: 'string', nullable: true })
  sliceName?: string | null;

  @Property({ type: new DecimalType('number'), precision: 14, scale: 2 })
  budget: number = 0;

  @Property({ ...TIMESTAMPTZ, nullable: true })
  closedAt?: Date | null;

  @Property({ type: 'integer' })
  versionSaved: number = 0;

  @Enum({ items: () => [...RESPONSE_TYPES], nullable: true })
  responseType?: ResponseType | null;

  @Property({ type: 'integer' })
  itemisedSheetVersion: number = 1;

  @Property({ type: 'boolean' })
  itemisedSheetIsDraft: boolean = true;

  @Property({ type: 'boolean' })
  itemisedSheetHasAdditionalServices: boolean = false;

  @Property({ ...TIMESTAMPTZ, nullable: true })
  endOfOfferDate?: Date | null;

  @Property({ ...TIMESTAMPTZ, nullable: true })
  consultationStartedAt?: Date | null;

  @Property({ type: 'boolean' })
  foldOpened: boolean = false;

  @ManyToOne({ entity: () => 'Document', nullable: true, index: true, deleteRule: 'set null' })
  favouriteConsultation?: Rel<Document> | null;

  /** The document whose offer is retained, when the architect chose one. */
  @ManyToOne({ entity: () => 'Document', nullable: true, index: true, deleteRule: 'set null' })
  selectedConsultation?: Rel<Document> | null;
}
