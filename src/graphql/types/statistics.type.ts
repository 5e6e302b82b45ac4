import { Field, Float, ID, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class AmountPercent {
  @Field(() => Float) value!: number;
  @Field(() => Float) percent!: number;
}

@ObjectType()
export class ProjectBudgets {
  @Field(() => Float) total!: number;
  @Field(() => Float) simulatedCost!: number;
  @Field(() => Float) totalAnticipatedTrades!: number;
  @Field(() => Float) totalAnticipatedOffers!: number;
  @Field(() => AmountPercent) budgetTradesToAssign!: AmountPercent;
  @Field(() => AmountPercent) projectDeviation!: AmountPercent;
}

@ObjectType()
export class ProjectStatistics {
  @Field(() => ID) projectId!: string;
  @Field(() => Int) answered!: number;
  @Field(() => Int) mayAnswer!: number;
  @Field(() => Int) declined!: number;
  @Field(() => Int) contractors!: number;
  @Field(() => Int) tenderDocuments!: number;
  @Field(() => ProjectBudgets) budgets!: ProjectBudgets;
}

@ObjectType()
export class TemplateStats {
  @Field(() => Float) deltaBudget!: number;
  @Field(() => Int) contractors!: number;
  @Field(() => Int) contractorsAnswers!: number;
  @Field(() => Int) contractorsPending!: number;
  @Field(() => Int) contractorsDeclined!: number;
  @Field(() => Int) contractorsInRevision!: number;
  @Field(() => Int) contractorsIntentionIsNo!: number;
  @Field(() => Int) contractorsIntentionIsMaybe!: number;
}
