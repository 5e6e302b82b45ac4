import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { NotInRest, Rest } from '../../platform/outputs/output';

const COUNT = { minimum: 0 };

@ObjectType({ simpleResolvers: true })
export class AmountPercent {
  @Field(() => Float) @Rest({ example: 77000 }) value!: number;
  @Field(() => Float) @Rest({ description: 'value / total x 100, 0 when total is 0', example: 21.66 }) percent!: number;
}

@ObjectType({ simpleResolvers: true })
export class ProjectBudgets {
  @Field(() => Float) @Rest({ example: 355500.5 }) total!: number;
  @Field(() => Float) @Rest({ example: 356799.5 }) simulatedCost!: number;
  @Field(() => Float) @Rest({ example: 278500.5 }) totalAnticipatedTrades!: number;
  @Field(() => Float) @Rest({ example: 279799.5 }) totalAnticipatedOffers!: number;
  @Field(() => AmountPercent) budgetTradesToAssign!: AmountPercent;
  @Field(() => AmountPercent) projectDeviation!: AmountPercent;
}

// Statistics are objects a client caches: each has an id of its own, derived from its record's id so that it
// is stable and never equal to that record's (a cache keys by typename and id, a crawl checks ids are unique).

@ObjectType({ description: 'Figures of a project (decisions.md section 5)', simpleResolvers: true })
export class ProjectStatistics {
  @Field(() => ID, { description: '"<projectId>:statistics"' }) @NotInRest() id!: string;
  @Field(() => ID) @NotInRest() projectId!: string;
  @Field(() => Int) @Rest({ schema: COUNT, example: 6 }) answered!: number;
  @Field(() => Int) @Rest({ schema: COUNT, example: 6 }) mayAnswer!: number;
  @Field(() => Int) @Rest({ schema: COUNT, example: 2 }) declined!: number;
  @Field(() => Int) @Rest({ schema: COUNT, example: 9 }) contractors!: number;
  @Field(() => Int) @Rest({ schema: COUNT, example: 10 }) tenderDocuments!: number;
  @Field(() => ProjectBudgets) budgets!: ProjectBudgets;
}

@ObjectType({ description: 'Figures of a template or slice (decisions.md section 5)', simpleResolvers: true })
export class TemplateStats {
  @Field(() => ID, { description: '"<templateId>:stats"' }) @NotInRest() id!: string;
  @Field(() => ID) @NotInRest() templateId!: string;
  @Field(() => Float) deltaBudget!: number;
  @Field(() => Int) contractors!: number;
  @Field(() => Int) contractorsAnswers!: number;
  @Field(() => Int) contractorsPending!: number;
  @Field(() => Int) contractorsDeclined!: number;
  @Field(() => Int) contractorsInRevision!: number;
  @Field(() => Int) contractorsIntentionIsNo!: number;
  @Field(() => Int) contractorsIntentionIsMaybe!: number;
}
