import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { CreditsScopeTypeEnum } from '../enums';
import { Rest, RestRecord } from '../../platform/outputs/output';

const DAY = { format: 'date' };

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
