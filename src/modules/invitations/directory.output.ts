import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../../seed/demo-ids';
import { CreditsScopeTypeEnum } from '../enums';
import { CompanyInformation } from '../organizations/organization.output';
import { Rest, RestRecord } from '../../platform/outputs/output';

const DAY = { format: 'date' };

@ObjectType({ description: 'A trade of a trade list (the model a project\'s trades are copied from)', simpleResolvers: true })
export class TradeListTrade {
  @Field(() => ID) @Rest({ example: DEMO_IDS.tradeListTrades.standard['01'] }) id!: string;
  @Field() @Rest({ example: '01' }) number!: string;
  @Field() @Rest({ example: 'Gros œuvre' }) name!: string;
  @Field() @Rest({ example: 'GO' }) shortName!: string;
}

/** `trades` resolves through a DataLoader (or from the root when the service already read them). */
@ObjectType({ simpleResolvers: true })
@RestRecord({ description: 'A trade list: a reusable catalogue of trades' })
export class TradeList {
  @Field(() => ID) @Rest({ example: DEMO_IDS.tradeLists.standard }) id!: string;
  @Field() @Rest({ example: 'Lots standard bâtiment' }) name!: string;
  @Field(() => ID, { nullable: true, description: 'null for a public list' }) @Rest({ example: null }) organizationId!: string | null;
  @Field(() => Date) @Rest({ example: '2026-01-02T08:00:00.000000Z' }) createdAt!: Date;
  @Field(() => Date) @Rest({ example: '2026-01-02T08:00:00.000000Z' }) updatedAt!: Date;
}

/** #24: REST sends the list's trades with it. */
@RestRecord({ description: 'A trade list with its trades' })
export class TradeListWithTrades extends TradeList {
  @Rest(() => [TradeListTrade]) trades!: TradeListTrade[];
}

@ObjectType({ description: 'An entry of an organization\'s contractor directory', simpleResolvers: true })
@RestRecord({ description: 'An entry of an organization\'s contractor directory' })
export class Contractor {
  @Field(() => ID) @Rest({ example: DEMO_IDS.contractors.batimentsDurand }) id!: string;
  @Field() @Rest({ example: 'Bâtiments Durand SAS' }) name!: string;
  @Field() @Rest({ example: 'p.durand@batiments-durand.fr' }) email!: string;
  @Field(() => String, { nullable: true }) @Rest({ example: '04 78 58 12 30' }) phone!: string | null;
  @Field(() => CompanyInformation) information!: CompanyInformation;
  @Field(() => ID, { nullable: true, description: 'The contractor company the entry is linked to' }) @Rest({ example: DEMO_IDS.organizations.batimentsDurand }) companyId!: string | null;
  @Field(() => Date) @Rest({ example: '2026-02-01T09:00:00.000000Z' }) createdAt!: Date;
  @Field(() => Date) @Rest({ example: '2026-02-01T09:00:00.000000Z' }) updatedAt!: Date;
}

// The two types below describe a period's figures about an organization or a headquarter, not those records:
// their ids are named for what they point to, never `id`, so that a cache does not take them for the records.

@ObjectType()
export class CreditsScope {
  @Field(() => CreditsScopeTypeEnum) @Rest({ example: 'organization' }) type!: string;
  @Field(() => ID, { name: 'scopeId', description: 'Id of the organization or headquarter reported on' }) @Rest({ example: DEMO_IDS.organizations.atelierDemo }) id!: string;
  @Field() @Rest({ example: 'Atelier Demo' }) name!: string;
}

@ObjectType()
export class OrganizationCredits {
  @Field(() => ID, { name: 'organizationId' }) @Rest({ example: DEMO_IDS.organizations.atelierDemo }) id!: string;
  @Field() @Rest({ example: 'Atelier Demo' }) name!: string;
  @Field(() => Int) @Rest({ schema: { minimum: 0 }, example: 6 }) total!: number;
}

@ObjectType({ simpleResolvers: true })
@RestRecord({ description: 'Credits consumed over a period by an organization or a headquarter' })
export class CreditsUsage {
  @Field(() => Int) @Rest({ schema: { minimum: 0 }, example: 6 }) total!: number;
  @Field({ description: 'YYYY-MM-DD, inclusive' }) @Rest({ schema: DAY, example: '2026-11-01' }) from!: string;
  @Field({ description: 'YYYY-MM-DD, inclusive' }) @Rest({ schema: DAY, example: '2026-11-23' }) to!: string;
  @Field(() => CreditsScope) scope!: CreditsScope;
  @Field(() => [OrganizationCredits]) organizations!: OrganizationCredits[];
}
