import { Collection, Entity, ManyToMany, OneToMany, Property } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Organization } from './organization.entity';
import { HeadquarterAdmin } from '../projects/pivots.entity';
import { User } from './user.entity';

/** A group of architect organizations; its admins may report on all of them (credits usage). */
@Entity({ tableName: 'headquarter' })
export class Headquarter extends LegacyEntity {
  @Property({ type: 'string' })
  name!: string;

  @OneToMany(() => Organization, (o) => o.headquarter)
  organizations = new Collection<Organization>(this);

  @ManyToMany({ entity: () => User, pivotEntity: () => HeadquarterAdmin })
  admins = new Collection<User>(this);
}
