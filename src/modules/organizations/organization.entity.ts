import { Collection, Entity, Enum, Index, ManyToOne, OneToMany, Property, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Headquarter } from './headquarter.entity';
import { Membership } from './membership.entity';

export enum OrganizationKind {
  ARCHITECT = 'ARCHITECT',
  CONTRACTOR = 'CONTRACTOR',
}

export interface OrganizationAddress {
  number: string;
  address: string;
  zipCode: string;
  city: string;
  /** lowercase two-letter country code */
  country: string;
}

/**
 * An organization: an architect organization (the tenants of this service) or a contractor company
 * (found by SIRET in the internal company lookups).
 */
@Entity({ tableName: 'organization' })
export class Organization extends LegacyEntity<'apiEnabled' | 'addresses' | 'businessSectors' | 'kind'> {
  @Property({ type: 'string' })
  name!: string;

  @Enum({ items: () => OrganizationKind })
  kind: OrganizationKind = OrganizationKind.ARCHITECT;

  /** SIRET: 14 digits. Several contractor organizations may share one. */
  @Index()
  @Property({ type: 'string', length: 14, nullable: true })
  fiscalNumber?: string | null;

  @Property({ type: 'json' })
  addresses: OrganizationAddress[] = [];

  @Property({ type: 'text[]' })
  businessSectors: string[] = [];

  /** Whether the API has been activated for the whole organization. */
  @Property({ type: 'boolean' })
  apiEnabled: boolean = true;

  @ManyToOne(() => Headquarter, { nullable: true, index: true, deleteRule: 'set null' })
  headquarter?: Rel<Headquarter> | null;

  @OneToMany(() => Membership, (m) => m.organization)
  memberships = new Collection<Membership>(this);
}
