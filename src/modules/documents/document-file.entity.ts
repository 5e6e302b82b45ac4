import { Entity, ManyToOne, Property, type Rel } from '@mikro-orm/core';
import { BaseEntity } from '../../platform/database/base.entity';
import { DocumentVersion } from './document-version.entity';

/** A file attached to a document version, kept in the service's own file storage (this table). */
@Entity({ tableName: 'document_file' })
export class DocumentFile extends BaseEntity {
  @ManyToOne(() => DocumentVersion, { index: true, deleteRule: 'cascade' })
  version!: Rel<DocumentVersion>;

  @Property({ type: 'string' })
  name!: string;

  @Property({ type: 'string' })
  contentType!: string;

  @Property({ type: 'integer' })
  size!: number;

  @Property({ type: 'blob', lazy: true })
  content!: Buffer;
}
