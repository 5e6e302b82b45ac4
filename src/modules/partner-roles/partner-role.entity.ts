import { Entity, ManyToOne, Property, Unique, type Rel } from '@mikro-orm/core';
import { BaseEntity } from '../../platform/database/base.entity';
import { User } from '../organizations/user.entity';

/** A role known to the partner platform. */
@Entity({ tableName: 'partner_role' })
export class PartnerRole extends BaseEntity<'isStandard'> {
  @Property({ type: 'string', unique: true })
  code!: string;

  @Property({ type: 'string' })
  name!: string;

  /** The role POST assigns when no other is named. */
  @Property({ type: 'boolean' })
  isStandard: boolean = false;
}

/** A partner-platform role currently authorized for a user. */
@Entity({ tableName: 'user_partner_role' })
@Unique({ properties: ['user', 'role'] })
export class UserPartnerRole extends BaseEntity {
  @ManyToOne(() => User, { index: true, deleteRule: 'cascade' })
  user!: Rel<User>;

  @ManyToOne(() => PartnerRole, { index: true, deleteRule: 'cascade' })
  role!: Rel<PartnerRole>;
}
