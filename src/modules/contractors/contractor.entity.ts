import { Entity, ManyToOne, Property, Unique, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Organization } from '../organizations/organization.entity';

/** An entry of an architect organization's contractor directory, one per email. */
@Entity({ tableName: 'contractor' })
@Unique({ properties: ['organization', 'email'] })
export class Contractor extends LegacyEntity {
  /** The architect organization whose directory holds this entry. */
  @ManyToOne(() => Organization, { index: true, deleteRule: 'cascade' })
  organization!: Rel<Organization>;

  /** The contractor company (organization of kind CONTRACTOR), when known. */
  @ManyToOne(() => Organization, { nullable: true, index: true, deleteRule: 'set null' })
  company?: Rel<Organization> | null;

  @Property({ type: 'string' })
  name!: string;

  /** Stored lowercase. */
  @Property({ type: 'string' })
  email!: string;

  @Property({ type: 'string', nullable: true })
  phone?: string | null;

  /** SIRET of the company, when known. */
  @Property({ type: 'string', length: 14, nullable: true, index: true })
  fiscalNumber?: string | null;
}
