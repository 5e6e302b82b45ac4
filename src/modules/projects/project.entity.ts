import { Collection, Entity, Enum, Index, ManyToMany, ManyToOne, OneToMany, Property, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Organization } from '../organizations/organization.entity';
import { ProjectManager } from './pivots.entity';
import { ProjectTrade } from '../trades/project-trade.entity';
import { TradeList } from '../trades/trade-list.entity';
import { User } from '../organizations/user.entity';
import { TIMESTAMPTZ } from '../../platform/database/timestamp.type';

export const CONSTRUCTION_TYPES = [
  'collective_building', 'extension', 'health_building', 'mall', 'office', 'other', 'public_building',
  'public_space', 'single_flat', 'warehouse',
] as const;
export type ConstructionType = (typeof CONSTRUCTION_TYPES)[number];

export const RESPONSE_TYPES = ['DPGF', 'DPGF_QUOTE', 'QUOTE'] as const;
export type ResponseType = (typeof RESPONSE_TYPES)[number];

export const CURRENCIES = ['CHF', 'DZD', 'EUR', 'GBP', 'MAD', 'TND', 'USD'] as const;
type Currency = (typeof CURRENCIES)[number];

export interface ProjectScopes {
  currency?: Currency | null;
  vat: number;
  prorate?: number | null;
  levels?: number | null;
}

export interface ProjectSiteAddress {
  number?: number | null;
  zipCode?: number | null;
}

export interface ProjectOptionalDates {
  /** YYYY-MM-DD */
  noc?: string | null;
  /** YYYY-MM-DD */
  responsesOpeningDate?: string | null;
}

/** A construction project of an architect organization, split into trades. */
@Entity({ tableName: 'project' })
@Index({ properties: ['organization', 'createdAt', 'id'] })
export class Project extends LegacyEntity<'tendersClosingActivated' | 'publishedOnMarketplace'> {
  @ManyToOne(() => Organization, { index: true })
  organization!: Rel<Organization>;

  @Property({ type: 'string' })
  name!: string;

  @Enum({ items: () => [...CONSTRUCTION_TYPES] })
  constructionType!: ConstructionType;

  @ManyToOne(() => TradeList, { index: true })
  tradeList!: Rel<TradeList>;

  @Enum({ items: () => [...RESPONSE_TYPES] })
  responseType!: ResponseType;

  /** YYYY-MM-DD */
  @Property({ type: 'date', nullable: true })
  endOfOfferDate?: string | null;

  /** YYYY-MM-DD */
  @Property({ type: 'date', nullable: true })
  endWorksConstruction?: string | null;

  /** YYYY-MM-DD */
  @Property({ type: 'date', nullable: true })
  commencementWorksConstruction?: string | null;

  @Property({ type: 'boolean' })
  tendersClosingActivated: boolean = false;

  @Property({ type: 'boolean' })
  publishedOnMarketplace: boolean = false;

  @Property({ type: 'json', nullable: true })
  scopes?: ProjectScopes | null;

  @Property({ type: 'json', nullable: true })
  siteAddress?: ProjectSiteAddress | null;

  @Property({ type: 'json', nullable: true })
  optionalDates?: ProjectOptionalDates | null;

  @ManyToMany({ entity: () => User, pivotEntity: () => ProjectManager })
  managers = new Collection<User>(this);

  @OneToMany(() => ProjectTrade, (t) => t.project)
  trades = new Collection<ProjectTrade>(this);

  /** Set by the archive operation; an archived project is read-only. */
  @Property({ ...TIMESTAMPTZ, nullable: true })
  archivedAt?: Date | null;
}
