import { Collection, Entity, ManyToOne, OneToMany, Property, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Membership } from './membership.entity';
import { Organization } from './organization.entity';

/** A person: architect users (who call the API) and contractor contacts alike. `id` is the token's `sub`. */
@Entity({ tableName: 'app_user' })
export class User extends LegacyEntity<'isRegistered' | 'apiAccessGranted' | 'apiEnabled' | 'phone'> {
  /** Stored lowercase; the login of the development identity provider. */
  @Property({ type: 'string', unique: true })
  email!: string;

  @Property({ type: 'string' })
  firstName!: string;

  @Property({ type: 'string' })
  lastName!: string;

  @Property({ type: 'string' })
  phone: string = '';

  @Property({ type: 'string', nullable: true })
  mobile?: string | null;

  /** scrypt hash (`scrypt$N$r$p$salt$hash`); null for users who cannot sign in. */
  @Property({ type: 'string', nullable: true, hidden: true })
  passwordHash?: string | null;

  @Property({ type: 'boolean' })
  isRegistered: boolean = true;

  /** Access to the API has been granted to this user. */
  @Property({ type: 'boolean' })
  apiAccessGranted: boolean = false;

  /** The API has been activated for this user. */
  @Property({ type: 'boolean' })
  apiEnabled: boolean = false;

  @ManyToOne(() => Organization, { nullable: true, index: true, deleteRule: 'set null' })
  currentOrganization?: Rel<Organization> | null;

  @OneToMany(() => Membership, (m) => m.user)
  memberships = new Collection<Membership>(this);
}
