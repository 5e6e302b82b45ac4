import { Check, DecimalType, Entity, Enum, Index, ManyToOne, Property, Unique, type Rel } from '@mikro-orm/core';
import { BaseEntity } from '../../platform/database/base.entity';
import { Document } from './document.entity';
import { TIMESTAMPTZ } from '../../platform/database/timestamp.type';

export enum VersionStatus {
  DRAFT = 'DRAFT',
  ANSWERED = 'ANSWERED',
  IN_REVISION = 'IN_REVISION',
  DECLINED = 'DECLINED',
}

/** A contractor's priced answer to a template, numbered from 1 within its document. */
@Entity({ tableName: 'document_version' })
@Unique({ properties: ['document', 'version'] })
// Derived, and required: a writer that bypasses the trigger is refused (Migration20270205000000_derived_data).
@Check({ name: 'document_version_template_id_check', expression: 'template_id is not null' })
@Index({
  name: 'document_version_template_id_index',
  expression: 'create index "document_version_template_id_index" on "document_version" ("template_id", "document_id", "version") include ("status", "sub_total", "discount")',
})
export class DocumentVersion extends BaseEntity<'discount' | 'isMandate' | 'hasDpgf'> {
  @ManyToOne(() => Document, { index: true, deleteRule: 'cascade' })
  document!: Rel<Document>;

  @Property({ type: 'integer' })
  version!: number;

  @Enum({ items: () => VersionStatus })
  status!: VersionStatus;

  @Property({ type: new DecimalType('number'), precision: 14, scale: 2 })
  subTotal!: number;

  @Property({ type: new DecimalType('number'), precision: 14, scale: 2 })
  discount: number = 0;

  @Property({ type: 'boolean' })
  isMandate: boolean = false;

  @Property({ type: 'boolean' })
  hasDpgf: boolean = false;

  /** Null while the version is a draft. */
  @Property({ ...TIMESTAMPTZ, nullable: true })
  sentAt?: Date | null;

  /**
   * Its document's template, set by triggers whoever writes the row (Migration20270120000000_version_template):
   * a page of projects reads its versions template by template from the index above. Never written here (the
   * column accepts none: the trigger sets it before the check above); not loaded with the entity.
   */
  @Property({ type: 'uuid', nullable: true, lazy: true })
  templateId?: string | null;
}
