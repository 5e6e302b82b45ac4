import { Field, Float, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ simpleResolvers: true })
export class AmountPercent {
  @Field(() => Float) value!: number;
  @Field(() => Float) percent!: number;
}

@ObjectType({ simpleResolvers: true })
export class ProjectBudgets {
  @Field(() => Float) total!: number;
  @Field(() => Float) simulatedCost!: number;
  @Field(() => Float) totalAnticipatedTrades!: number;
  @Field(() => Float) totalAnticipatedOffers!: number;
  @Field(() => AmountPercent) budgetTradesToAssign!: AmountPercent;
  @Field(() => AmountPercent) projectDeviation!: AmountPercent;
}

// Statistics are objects a client caches: each has an id of its own, derived from its record's id so that it
// is stable and never equal to that record's (a cache keys by typename and id, a crawl checks ids are unique).

@ObjectType({ description: 'Figures of a project (decisions.md section 5)', simpleResolvers: true })
export class ProjectStatistics {
  @Field(() => ID, { description: '"<projectId>:statistics"' }) id!: string;
  @Field(() => ID) projectId!: string;
  @Field(() => Int) answered!: number;
  @Field(() => Int) mayAnswer!: number;
  @Field(() => Int) declined!: number;
  @Field(() => Int) contractors!: number;
  @Field(() => Int) tenderDocuments!: number;
  @Field(() => ProjectBudgets) budgets!: ProjectBudgets;
}

@ObjectType({ description: 'Figures of a template or slice (decisions.md section 5)', simpleResolvers: true })
export class TemplateStats {
  @Field(() => ID, { description: '"<templateId>:stats"' }) id!: string;
  @Field(() => ID) templateId!: string;
  @Field(() => Float) deltaBudget!: number;
  @Field(() => Int) contractors!: number;
  @Field(() => Int) contractorsAnswers!: number;
  @Field(() => Int) contractorsPending!: number;
  @Field(() => Int) contractorsDeclined!: number;
  @Field(() => Int) contractorsInRevision!: number;
  @Field(() => Int) contractorsIntentionIsNo!: number;
  @Field(() => Int) contractorsIntentionIsMaybe!: number;
}
