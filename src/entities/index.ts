import { AuthSession, RefreshToken, SigningKey } from './auth.entity';
import { Contractor } from './contractor.entity';
import { CreditLedgerEntry } from './credit-ledger-entry.entity';
import { Document } from './document.entity';
import { DocumentFile } from './document-file.entity';
import { DocumentVersion } from './document-version.entity';
import { Headquarter } from './headquarter.entity';
import { Membership } from './membership.entity';
import { Organization } from './organization.entity';
import { PartnerRole, UserPartnerRole } from './partner-role.entity';
import { HeadquarterAdmin, ProjectManager } from './pivots.entity';
import { Project } from './project.entity';
import { ProjectTrade } from './project-trade.entity';
import { Template } from './template.entity';
import { TradeCategory, TradeCategoryMapping } from './trade-category.entity';
import { TradeList } from './trade-list.entity';
import { TradeListTrade } from './trade-list-trade.entity';
import { User } from './user.entity';

export * from './auth.entity';
export * from './contractor.entity';
export * from './credit-ledger-entry.entity';
export * from './document.entity';
export * from './document-file.entity';
export * from './document-version.entity';
export * from './headquarter.entity';
export * from './membership.entity';
export * from './organization.entity';
export * from './partner-role.entity';
export * from './pivots.entity';
export * from './project.entity';
export * from './project-trade.entity';
export * from './template.entity';
export * from './trade-category.entity';
export * from './trade-list.entity';
export * from './trade-list-trade.entity';
export * from './user.entity';

/** Every entity, for the ORM configuration. */
export const ENTITIES = [
  AuthSession, RefreshToken, SigningKey, Contractor, CreditLedgerEntry, Document, DocumentFile, DocumentVersion,
  Headquarter, HeadquarterAdmin, Membership, Organization, PartnerRole, UserPartnerRole, Project, ProjectManager, ProjectTrade, Template,
  TradeCategory, TradeCategoryMapping, TradeList, TradeListTrade, User,
];
