import { Field, Float, ID, InputType } from 'type-graphql';
import { CONSTRUCTION_TYPES, CURRENCIES, RESPONSE_TYPES } from './project.entity';
import { ConstructionTypeEnum, CurrencyEnum, ResponseTypeEnum } from '../enums';
import { AtLeast, AtMost, Bool, DateInput, List, Nested, Num, OneOf, Optional, PageSize, Required, Text, Uuid } from '../../platform/validation/rules';
import { JSONSchema } from 'class-validator-jsonschema';

@InputType('ProjectManagerInput')
export class ManagerInput {
  @Field(() => ID)
  @Required() @Uuid()
  id!: string;
}

@InputType('ProjectScopesInput')
export class ScopesInput {
  @Field(() => CurrencyEnum, { nullable: true })
  @Optional() @OneOf(CURRENCIES)
  currency?: string | null;

  @Field(() => Float)
  @Required() @Num() @AtLeast(1) @AtMost(100)
  vat!: number;

  @Field(() => Float, { nullable: true })
  @Optional() @Num() @AtLeast(0) @AtMost(100)
  prorate?: number | null;

  @Field(() => Float, { nullable: true })
  @Optional() @Num() @AtLeast(1)
  levels?: number | null;
}

@InputType('ProjectSiteAddressInput')
export class SiteAddressInput {
  @Field(() => Float, { nullable: true })
  @Optional() @Num() @AtLeast(1)
  number?: number | null;

  @Field(() => Float, { nullable: true })
  @Optional() @Num()
  zipCode?: number | null;
}

@InputType('ProjectOptionalDatesInput')
export class OptionalDatesInput {
  @Field(() => String, { nullable: true })
  @Optional() @DateInput()
  noc?: string | null;

  @Field(() => String, { nullable: true })
  @Optional() @DateInput()
  responsesOpeningDate?: string | null;
}

/** Project (create input) of interface.md. */
@InputType('CreateProjectInput')
export class CreateProjectInput {
  @Field(() => String)
  @Required() @Text()
  name!: string;

  @Field(() => ID, { nullable: true, description: 'Defaults to the caller\'s current organization' })
  @Optional() @Uuid()
  organizationId?: string | null;

  @Field(() => ConstructionTypeEnum)
  @Required() @OneOf(CONSTRUCTION_TYPES)
  constructionType!: string;

  @Field(() => [ManagerInput])
  @Required() @List(1) @Nested(() => ManagerInput, { each: true })
  managers!: ManagerInput[];

  @Field(() => ID)
  @Required() @Uuid()
  tradeListId!: string;

  @Field(() => ResponseTypeEnum)
  @Required() @OneOf(RESPONSE_TYPES)
  responseType!: string;

  @Field(() => String, { nullable: true })
  @Optional() @DateInput()
  endOfOfferDate?: string | null;

  @Field(() => String, { nullable: true })
  @Optional() @DateInput()
  endWorksConstruction?: string | null;

  @Field(() => String, { nullable: true })
  @Optional() @DateInput()
  commencementWorksConstruction?: string | null;

  @Field(() => Boolean, { nullable: true })
  @Optional() @Bool()
  tendersClosingActivated?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  @Optional() @Bool()
  publishedOnMarketplace?: boolean | null;

  @Field(() => ScopesInput, { nullable: true })
  @Optional() @Nested(() => ScopesInput)
  scopes?: ScopesInput | null;

  @Field(() => SiteAddressInput, { nullable: true })
  @Optional() @Nested(() => SiteAddressInput)
  siteAddress?: SiteAddressInput | null;

  @Field(() => OptionalDatesInput, { nullable: true })
  @Optional() @Nested(() => OptionalDatesInput)
  optionalDates?: OptionalDatesInput | null;
}

/** Query of GET projects. */
export class ListProjectsQuery {
  @Optional() @Uuid()
  organizationId?: string;

  @Optional() @OneOf(['true', 'false'])
  archived?: string;

  @Optional() @PageSize()
  limit?: string;

  @Optional() @Text(512) @JSONSchema({ description: '`next_cursor` of the previous page' })
  cursor?: string;
}
