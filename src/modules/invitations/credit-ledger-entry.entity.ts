import { Entity, Index, ManyToOne, Property, type Rel } from '@mikro-orm/core';
import { BaseEntity } from '../../platform/database/base.entity';
import { Organization } from '../organizations/organization.entity';

export const CREDIT_KINDS = ['INVITATION', 'ADJUSTMENT'] as const;

/** One consumption of credits by an organization (append-only). */
@Entity({ tableName: 'credit_ledger_entry' })
@Index({ properties: ['organization', 'createdAt'] })
export class CreditLedgerEntry extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Rel<Organization>;

  @Property({ type: 'integer' })
  amount!: number;

  @Property({ type: 'string' })
  kind!: (typeof CREDIT_KINDS)[number];

  /** What consumed the credits, e.g. the document created by an invitation. */
  @Property({ type: 'uuid', nullable: true })
  referenceId?: string | null;
}
