import { Entity, Enum, ManyToOne, Unique, type Rel } from '@mikro-orm/core';
import { BaseEntity } from '../../platform/database/base.entity';
import { Organization } from './organization.entity';
import { User } from './user.entity';

export enum MembershipRole {
  ADMINISTRATOR = 'ADMINISTRATOR',
  MEMBER = 'MEMBER',
}

/** A user's place in an organization. Only Administrators see the organization's data. */
@Entity({ tableName: 'membership' })
@Unique({ properties: ['user', 'organization'] })
export class Membership extends BaseEntity {
  @ManyToOne(() => User, { index: true, deleteRule: 'cascade' })
  user!: Rel<User>;

  @ManyToOne(() => Organization, { index: true, deleteRule: 'cascade' })
  organization!: Rel<Organization>;

  @Enum({ items: () => MembershipRole })
  role!: MembershipRole;
}
