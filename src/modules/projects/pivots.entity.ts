import { Entity, ManyToOne, PrimaryKeyProp, type Rel } from '@mikro-orm/core';
import { Headquarter } from '../organizations/headquarter.entity';
import { Project } from './project.entity';
import { User } from '../organizations/user.entity';

// Explicit pivot entities, so the second column of each pivot gets an index of its own too.

/** A manager of a project. */
@Entity({ tableName: 'project_manager' })
export class ProjectManager {
  [PrimaryKeyProp]?: ['project', 'user'];

  @ManyToOne(() => Project, { primary: true, deleteRule: 'cascade' })
  project!: Rel<Project>;

  @ManyToOne(() => User, { primary: true, index: true, deleteRule: 'cascade' })
  user!: Rel<User>;
}

/** An admin of a headquarter. */
@Entity({ tableName: 'headquarter_admin' })
export class HeadquarterAdmin {
  [PrimaryKeyProp]?: ['headquarter', 'user'];

  @ManyToOne(() => Headquarter, { primary: true, deleteRule: 'cascade' })
  headquarter!: Rel<Headquarter>;

  @ManyToOne(() => User, { primary: true, index: true, deleteRule: 'cascade' })
  user!: Rel<User>;
}
