import { Field, ID, Int, ObjectType } from 'type-graphql';
import { CreditsScopeTypeEnum } from '../../services/inputs/enums';
import { CompanyInformation } from './organization.type';

@ObjectType({ description: 'A trade of a trade list (the model a project\'s trades are copied from)', simpleResolvers: true })
export class TradeListTrade {
  @Field(() => ID) id!: string;
  @Field() number!: string;
  @Field() name!: string;
  @Field() shortName!: string;
}

/** `trades` resolves through a DataLoader (or from the root when the service already read them). */
@ObjectType({ simpleResolvers: true })
export class TradeList {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => ID, { nullable: true, description: 'null for a public list' }) organizationId!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType({ description: 'An entry of an organization\'s contractor directory', simpleResolvers: true })
export class Contractor {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() email!: string;
  @Field(() => String, { nullable: true }) phone!: string | null;
  @Field(() => CompanyInformation) information!: CompanyInformation;
  @Field(() => ID, { nullable: true, description: 'The contractor company the entry is linked to' }) companyId!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

// The two types below describe a period's figures about an organization or a headquarter, not those records:
// their ids are named for what they point to, never `id`, so that a cache does not take them for the records.
// Not `simpleResolvers`: graphql-js's default resolver would look for `scopeId` / `organizationId` on the record.

@ObjectType()
export class CreditsScope {
  @Field(() => CreditsScopeTypeEnum) type!: string;
  @Field(() => ID, { name: 'scopeId', description: 'Id of the organization or headquarter reported on' }) id!: string;
  @Field() name!: string;
}

@ObjectType()
export class OrganizationCredits {
  @Field(() => ID, { name: 'organizationId' }) id!: string;
  @Field() name!: string;
  @Field(() => Int) total!: number;
}

@ObjectType({ simpleResolvers: true })
export class CreditsUsage {
  @Field(() => Int) total!: number;
  @Field({ description: 'YYYY-MM-DD, inclusive' }) from!: string;
  @Field({ description: 'YYYY-MM-DD, inclusive' }) to!: string;
  @Field(() => CreditsScope) scope!: CreditsScope;
  @Field(() => [OrganizationCredits]) organizations!: OrganizationCredits[];
}
