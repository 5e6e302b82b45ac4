import { Entity, Enum, ManyToOne, Property, Unique, type Rel } from '@mikro-orm/core';
import { LegacyEntity } from '../../platform/database/base.entity';
import { Contractor } from '../contractors/contractor.entity';
import { Template } from '../templates/template.entity';
import { TIMESTAMPTZ } from '../../platform/database/timestamp.type';

export enum Intention {
  YES = 'YES',
  NO = 'NO',
  MAYBE = 'MAYBE',
}

/** One invited contractor on one template (or slice): the contractor's answers are its versions. */
@Entity({ tableName: 'document' })
@Unique({ properties: ['template', 'contractor'] })
export class Document extends LegacyEntity {
  @ManyToOne(() => Template, { index: true, deleteRule: 'cascade' })
  template!: Rel<Template>;

  @ManyToOne(() => Contractor, { index: true })
  contractor!: Rel<Contractor>;

  @Enum({ items: () => Intention, nullable: true })
  intention?: Intention | null;

  /** When the contractor downloaded the consultation file (DCE). */
  @Property({ ...TIMESTAMPTZ, nullable: true })
  dceDownloadedAt?: Date | null;
}
