import { AuthSession, RefreshToken, SigningKey } from './identity/auth.entity';
import { Contractor } from './contractors/contractor.entity';
import { CreditLedgerEntry } from './invitations/credit-ledger-entry.entity';
import { Document } from './documents/document.entity';
import { DocumentFile } from './documents/document-file.entity';
import { DocumentVersion } from './documents/document-version.entity';
import { Headquarter } from './organizations/headquarter.entity';
import { Membership } from './organizations/membership.entity';
import { Organization } from './organizations/organization.entity';
import { PartnerRole, UserPartnerRole } from './partner-roles/partner-role.entity';
import { HeadquarterAdmin, ProjectManager } from './projects/pivots.entity';
import { Project } from './projects/project.entity';
import { ProjectTrade } from './trades/project-trade.entity';
import { Template } from './templates/template.entity';
import { TradeCategory, TradeCategoryMapping } from './trades/trade-category.entity';
import { TradeList } from './trades/trade-list.entity';
import { TradeListTrade } from './trades/trade-list-trade.entity';
import { User } from './organizations/user.entity';

export * from './identity/auth.entity';
export * from './contractors/contractor.entity';
export * from './invitations/credit-ledger-entry.entity';
export * from './documents/document.entity';
export * from './documents/document-file.entity';
export * from './documents/document-version.entity';
export * from './organizations/headquarter.entity';
export * from './organizations/membership.entity';
export * from './organizations/organization.entity';
export * from './partner-roles/partner-role.entity';
export * from './projects/pivots.entity';
export * from './projects/project.entity';
export * from './trades/project-trade.entity';
export * from './templates/template.entity';
export * from './trades/trade-category.entity';
export * from './trades/trade-list.entity';
export * from './trades/trade-list-trade.entity';
export * from './organizations/user.entity';

/** Every entity, for the ORM configuration. */
export const ENTITIES = [
  AuthSession, RefreshToken, SigningKey, Contractor, CreditLedgerEntry, Document, DocumentFile, DocumentVersion,
  Headquarter, HeadquarterAdmin, Membership, Organization, PartnerRole, UserPartnerRole, Project, ProjectManager, ProjectTrade, Template,
  TradeCategory, TradeCategoryMapping, TradeList, TradeListTrade, User,
];
