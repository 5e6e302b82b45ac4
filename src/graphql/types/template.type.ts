import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { ResponseTypeEnum } from '../../services/inputs/enums';

@ObjectType({ simpleResolvers: true })
export class TemplateBudgets {
  @Field(() => Float) value!: number;
}

@ObjectType({ simpleResolvers: true })
export class ItemisedSheet {
  @Field(() => Int) version!: number;
  @Field() isDraft!: boolean;
  @Field() hasAdditionalServices!: boolean;
}

/** The template record of interface.md; `trade`, `stats`, `documents` and `slices` resolve through DataLoaders. */
@ObjectType({ simpleResolvers: true })
export class Template {
  @Field(() => ID) id!: string;
  @Field(() => ID) projectId!: string;
  @Field() isSlice!: boolean;
  @Field(() => String, { nullable: true, description: 'Slice name; null when the template is not a slice' }) slice!: string | null;
  @Field(() => Date, { nullable: true }) closedAt!: Date | null;
  @Field(() => Int) versionSaved!: number;
  @Field(() => ResponseTypeEnum, { nullable: true }) responseType!: string | null;
  @Field(() => TemplateBudgets) budgets!: TemplateBudgets;
  @Field(() => ItemisedSheet) itemisedSheet!: ItemisedSheet;
  @Field(() => Date, { nullable: true }) endOfOfferDate!: Date | null;
  @Field(() => Date, { nullable: true }) consultationStartedAt!: Date | null;
  @Field() foldOpened!: boolean;
  @Field(() => ID, { nullable: true }) favouriteConsultationId!: string | null;
  @Field(() => ID, { nullable: true }) selectedConsultationId!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
