import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { ConstructionTypeEnum, CurrencyEnum, ResponseTypeEnum } from '../../services/inputs/enums';

@ObjectType({ simpleResolvers: true })
export class ProjectScopes {
  @Field(() => CurrencyEnum, { nullable: true }) currency!: string | null;
  @Field(() => Float) vat!: number;
  @Field(() => Float, { nullable: true }) prorate!: number | null;
  @Field(() => Float, { nullable: true }) levels!: number | null;
}

@ObjectType({ simpleResolvers: true })
export class ProjectSiteAddress {
  @Field(() => Float, { nullable: true }) number!: number | null;
  @Field(() => Float, { nullable: true }) zipCode!: number | null;
}

@ObjectType({ simpleResolvers: true })
export class ProjectOptionalDates {
  @Field(() => String, { nullable: true }) noc!: string | null;
  @Field(() => String, { nullable: true }) responsesOpeningDate!: string | null;
}

/** Relations (organization, managers, trades, templates, statistics) are field resolvers over DataLoaders. */
@ObjectType({ simpleResolvers: true })
export class Project {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => ID) organizationId!: string;
  @Field(() => ConstructionTypeEnum) constructionType!: string;
  @Field(() => ID) tradeListId!: string;
  @Field(() => ResponseTypeEnum) responseType!: string;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' }) endOfOfferDate!: string | null;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' }) endWorksConstruction!: string | null;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' }) commencementWorksConstruction!: string | null;
  @Field() tendersClosingActivated!: boolean;
  @Field() publishedOnMarketplace!: boolean;
  @Field(() => ProjectScopes, { nullable: true }) scopes!: ProjectScopes | null;
  @Field(() => ProjectSiteAddress, { nullable: true }) siteAddress!: ProjectSiteAddress | null;
  @Field(() => ProjectOptionalDates, { nullable: true }) optionalDates!: ProjectOptionalDates | null;
  @Field() archived!: boolean;
  @Field(() => Date, { nullable: true }) archivedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType({ simpleResolvers: true })
export class ProjectEdge {
  @Field() cursor!: string;
  @Field(() => Project) node!: Project;
}

/** Relay's PageInfo. Pages only go forward (`first`, `after`). */
@ObjectType({ simpleResolvers: true })
export class PageInfo {
  @Field() hasNextPage!: boolean;
  @Field({ description: 'true when the page was asked for `after` a cursor' }) hasPreviousPage!: boolean;
  @Field(() => String, { nullable: true, description: 'Cursor of the first edge; null for an empty page' }) startCursor!: string | null;
  @Field(() => String, { nullable: true, description: 'Cursor of the last edge; null for an empty page' }) endCursor!: string | null;
}

@ObjectType({ simpleResolvers: true })
export class ProjectConnection {
  @Field(() => [Project]) nodes!: Project[];
  @Field(() => [ProjectEdge]) edges!: ProjectEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
  @Field(() => Int) totalCount!: number;
}

/** A trade (lot) of a project, wherever it appears: in `Project.trades` and as a template's `trade`. */
@ObjectType({ description: 'A trade (lot) of a project', simpleResolvers: true })
export class ProjectTrade {
  @Field(() => ID) id!: string;
  @Field(() => ID) projectId!: string;
  @Field() number!: string;
  @Field() name!: string;
  @Field() shortName!: string;
  @Field(() => String, { nullable: true }) comment!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
