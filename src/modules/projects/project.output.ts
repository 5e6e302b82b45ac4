import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { DEMO_IDS, demoLegacyId } from '../examples';
import { ConstructionTypeEnum, CurrencyEnum, ResponseTypeEnum } from '../enums';
import { Rest, RestRecord } from '../../platform/outputs/output';
import { PageInfo } from '../../platform/outputs/page-info';

const DAY = { format: 'date' };

/** A manager in a REST project: the user's name and email (GraphQL resolves `managers` to whole users). */
@RestRecord({ description: 'A manager of a project' })
export class ProjectManager {
  @Rest(() => ID, { example: DEMO_IDS.users.architect }) id!: string;
  @Rest(() => String, { example: 'Claire' }) firstName!: string;
  @Rest(() => String, { example: 'Dubois' }) lastName!: string;
  @Rest(() => String, { example: 'architect@demo.test' }) email!: string;
}

@ObjectType({ simpleResolvers: true })
export class ProjectScopes {
  @Field(() => CurrencyEnum, { nullable: true }) @Rest({ example: 'EUR' }) currency!: string | null;
  @Field(() => Float) @Rest({ example: 20 }) vat!: number;
  @Field(() => Float, { nullable: true }) prorate!: number | null;
  @Field(() => Float, { nullable: true }) levels!: number | null;
}

@ObjectType({ simpleResolvers: true })
export class ProjectSiteAddress {
  @Field(() => Float, { nullable: true }) @Rest({ example: 14 }) number!: number | null;
  @Field(() => Float, { nullable: true }) @Rest({ example: 69003 }) zipCode!: number | null;
}

@ObjectType({ simpleResolvers: true })
export class ProjectOptionalDates {
  @Field(() => String, { nullable: true }) @Rest({ schema: DAY, description: 'YYYY-MM-DD' }) noc!: string | null;
  @Field(() => String, { nullable: true }) @Rest({ schema: DAY, description: 'YYYY-MM-DD' }) responsesOpeningDate!: string | null;
}

/** Relations (organization, managers, trades, templates, statistics) are field resolvers over DataLoaders. */
@ObjectType({ simpleResolvers: true })
@RestRecord({ description: 'A project: every field of the create input, its managers, archive state and times' })
export class Project {
  @Field(() => ID) @Rest({ example: DEMO_IDS.projects.residence }) id!: string;
  @Rest(() => String, { description: 'The 17-character identifier of legacy consumers (tools/ids-to-uuids)', schema: { minLength: 17, maxLength: 17 }, example: demoLegacyId(DEMO_IDS.projects.residence) })
  legacyId!: string;
  @Field() @Rest({ example: 'Résidence Les Tilleuls – 42 logements' }) name!: string;
  @Field(() => ID) @Rest({ example: DEMO_IDS.organizations.atelierDemo }) organizationId!: string;
  @Field(() => ConstructionTypeEnum) @Rest({ example: 'collective_building' }) constructionType!: string;
  @Rest(() => [ProjectManager], { description: 'At least one' }) managers!: ProjectManager[];
  @Field(() => ID) @Rest({ example: DEMO_IDS.tradeLists.standard }) tradeListId!: string;
  @Field(() => ResponseTypeEnum) @Rest({ example: 'DPGF' }) responseType!: string;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' }) @Rest({ schema: DAY, example: '2027-01-29' }) endOfOfferDate!: string | null;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' }) @Rest({ schema: DAY, example: '2028-09-29' }) endWorksConstruction!: string | null;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' }) @Rest({ schema: DAY, example: '2027-04-05' }) commencementWorksConstruction!: string | null;
  @Field() tendersClosingActivated!: boolean;
  @Field() publishedOnMarketplace!: boolean;
  @Field(() => ProjectScopes, { nullable: true }) scopes!: ProjectScopes | null;
  @Field(() => ProjectSiteAddress, { nullable: true }) siteAddress!: ProjectSiteAddress | null;
  @Field(() => ProjectOptionalDates, { nullable: true }) optionalDates!: ProjectOptionalDates | null;
  @Field() archived!: boolean;
  @Field(() => Date, { nullable: true }) archivedAt!: Date | null;
  @Field(() => Date) @Rest({ example: '2026-06-02T08:30:00.000000Z' }) createdAt!: Date;
  @Field(() => Date) @Rest({ example: '2026-06-02T08:30:00.000000Z' }) updatedAt!: Date;
}

@ObjectType({ simpleResolvers: true })
export class ProjectEdge {
  @Field() cursor!: string;
  @Field(() => Project) node!: Project;
}

@ObjectType({ simpleResolvers: true })
export class ProjectConnection {
  @Field(() => [Project]) nodes!: Project[];
  @Field(() => [ProjectEdge]) edges!: ProjectEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
  @Field(() => Int) totalCount!: number;
}
