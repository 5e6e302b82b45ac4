import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { ResponseTypeEnum } from '../enums';
import { Document } from '../documents/document.output';
import { Rest, RestRecord } from '../../platform/outputs/output';
import { TemplateStats } from '../statistics/statistics.output';

/** A template's trade as REST embeds it: the project trade, in short. */
@RestRecord({ description: 'The project trade of a template, in short' })
export class TemplateTrade {
  @Rest(() => ID, { example: DEMO_IDS.projectTrades.residence['01'] }) id!: string;
  @Rest(() => String, { example: 'Gros œuvre' }) name!: string;
  @Rest(() => String, { example: '01' }) number!: string;
  @Rest(() => String, { example: 'GO' }) shortName!: string;
}

@ObjectType({ simpleResolvers: true })
export class TemplateBudgets {
  @Field(() => Float) @Rest({ example: 120000 }) value!: number;
}

@ObjectType({ simpleResolvers: true })
export class ItemisedSheet {
  @Field(() => Int) version!: number;
  @Field() isDraft!: boolean;
  @Field() hasAdditionalServices!: boolean;
}

/** The template record of interface.md; `trade`, `stats`, `documents` and `slices` resolve through DataLoaders. */
@ObjectType({ simpleResolvers: true })
@RestRecord({ description: 'The template record of the interface: a template or a slice, with its trade and statistics' })
export class Template {
  @Field(() => ID) @Rest({ example: DEMO_IDS.templates.residenceGrosOeuvre }) id!: string;
  @Field(() => ID) @Rest({ example: DEMO_IDS.projects.residence }) projectId!: string;
  @Field() isSlice!: boolean;
  @Field(() => String, { nullable: true, description: 'Slice name; null when the template is not a slice' }) @Rest({ example: null }) slice!: string | null;
  @Field(() => Date, { nullable: true }) closedAt!: Date | null;
  @Field(() => Int) @Rest({ example: 3 }) versionSaved!: number;
  @Field(() => ResponseTypeEnum, { nullable: true }) @Rest({ example: 'DPGF' }) responseType!: string | null;
  @Field(() => TemplateBudgets) budgets!: TemplateBudgets;
  @Field(() => ItemisedSheet) itemisedSheet!: ItemisedSheet;
  @Rest(() => TemplateTrade) trade!: TemplateTrade;
  @Field(() => Date, { nullable: true }) @Rest({ example: '2027-01-29T12:00:00.000000Z' }) endOfOfferDate!: Date | null;
  @Field(() => Date, { nullable: true }) @Rest({ example: '2026-09-14T08:00:00.000000Z' }) consultationStartedAt!: Date | null;
  @Field() foldOpened!: boolean;
  @Field(() => ID, { nullable: true }) @Rest({ example: DEMO_IDS.documents.residenceGoDurand }) favouriteConsultationId!: string | null;
  @Field(() => ID, { nullable: true }) @Rest({ example: DEMO_IDS.documents.residenceGoDurand }) selectedConsultationId!: string | null;
  @Rest(() => TemplateStats) stats!: TemplateStats;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

/** An item of #12: a template or slice with its contractors' documents. */
@RestRecord({ description: 'A template or slice with its contractors\' documents' })
export class TemplateDocuments {
  @Rest(() => ID, { example: DEMO_IDS.templates.residenceGrosOeuvre }) id!: string;
  @Rest(() => String, { description: 'The trade\'s name, followed by " - <slice>" for a slice', example: 'Gros œuvre' }) name!: string;
  @Rest(() => Boolean) isSlice!: boolean;
  @Rest(() => String, { nullable: true, description: 'Slice name; null when the template is not a slice', example: null }) slice!: string | null;
  @Rest(() => TemplateTrade) trade!: TemplateTrade;
  @Rest(() => [Document]) documents!: Document[];
}

/** "Template detail" of the interface (#13). */
@RestRecord({ description: 'Template detail: a template or slice and its contractors\' documents with their versions' })
export class TemplateDetail {
  @Rest(() => ID, { example: DEMO_IDS.templates.residenceGrosOeuvre }) id!: string;
  @Rest(() => String, { description: 'The trade\'s name, followed by " - <slice>" for a slice', example: 'Gros œuvre' }) name!: string;
  @Rest(() => [Document]) documents!: Document[];
}
