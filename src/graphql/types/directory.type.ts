import { Field, ID, Int, ObjectType } from 'type-graphql';
import { ContractorInformation } from './document.type';

@ObjectType()
export class TradeListTrade {
  @Field(() => ID) id!: string;
  @Field() number!: string;
  @Field() name!: string;
  @Field() shortName!: string;
}

@ObjectType()
export class TradeList {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => ID, { nullable: true, description: 'null for a public list' }) organizationId!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class TradeListWithTrades extends TradeList {
  @Field(() => [TradeListTrade]) trades!: TradeListTrade[];
}

@ObjectType({ description: 'An entry of the current organization\'s contractor directory' })
export class DirectoryContractor {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() email!: string;
  @Field(() => String, { nullable: true }) phone!: string | null;
  @Field(() => ContractorInformation) information!: ContractorInformation;
  @Field(() => ID, { nullable: true }) companyId!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class CreditsScope {
  @Field({ description: 'organization or headquarter' }) type!: string;
  @Field(() => ID) id!: string;
  @Field() name!: string;
}

@ObjectType()
export class OrganizationCredits {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => Int) total!: number;
}

@ObjectType()
export class CreditsUsage {
  @Field(() => Int) total!: number;
  @Field({ description: 'YYYY-MM-DD, inclusive' }) from!: string;
  @Field({ description: 'YYYY-MM-DD, inclusive' }) to!: string;
  @Field(() => CreditsScope) scope!: CreditsScope;
  @Field(() => [OrganizationCredits]) organizations!: OrganizationCredits[];
}
