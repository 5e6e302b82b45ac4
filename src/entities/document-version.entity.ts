import { DecimalType, Entity, Enum, ManyToOne, Property, Unique, type Rel } from '@mikro-orm/core';
import { BaseEntity } from './base.entity';
import { Document } from './document.entity';

export enum VersionStatus {
  DRAFT = 'DRAFT',
  ANSWERED = 'ANSWERED',
  IN_REVISION = 'IN_REVISION',
  DECLINED = 'DECLINED',
}

/** A contractor's priced answer to a template, numbered from 1 within its document. */
@Entity({ tableName: 'document_version' })
@Unique({ properties: ['document', 'version'] })
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
  @Property({ type: 'timestamptz', nullable: true })
  sentAt?: Date | null;
}
