import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { AmountPercent } from '../statistics/statistics.output';
import { CurrencyEnum, DocumentStateEnum, IntentionEnum } from '../enums';
import { Rest } from '../../platform/outputs/output';

/**
 * Bid leveling (issue 13, docs/leveling.md): one class per record, feeding the GraphQL type and the REST
 * component alike. Money is rounded to 2 decimals once, after exact arithmetic as PostgreSQL's on numerics
 * (src/modules/leveling/leveling-figures.ts); every percent is rounded to 2 decimals and is 0 when what it divides by
 * is 0 (decisions.md sections 2 and 5). GraphQL adds, through field resolvers, the cache ids of
 * TemplateLeveling and ProjectLeveling and the `contractor` of entries and columns; the other fields are
 * `simpleResolvers`, read off the record (a leveling of 1,000 projects has ~1.5 million of them).
 */

const COUNT = { minimum: 0 };
const PERCENT = { minimum: 0, maximum: 100 };

@ObjectType({ description: 'The offer of a document: its latest ANSWERED version', simpleResolvers: true })
export class LevelingOffer {
  @Field(() => Int, { description: 'Number of the version' }) @Rest({ schema: { minimum: 1 }, example: 2 }) version!: number;
  @Field(() => Date, { nullable: true }) sentAt!: Date | null;
  @Field(() => Float) @Rest({ example: 116500 }) subTotal!: number;
  @Field(() => Float) @Rest({ example: 1000 }) discount!: number;
  @Field(() => Float, { description: 'sub_total - discount' }) @Rest({ example: 115500 }) amount!: number;
}

@ObjectType({ description: 'A document of a lot side by side with the others: offers first, ranked, then the documents without an offer', simpleResolvers: true })
export class LevelingEntry {
  @Field(() => ID) documentId!: string;
  @Field(() => ID) contractorId!: string;
  @Field({ description: 'The contractor\'s name in the organization\'s directory' }) @Rest({ example: 'Bâtiments Durand' }) contractorName!: string;
  @Field(() => DocumentStateEnum) state!: string;
  @Field(() => IntentionEnum, { nullable: true }) intention!: string | null;
  @Field(() => LevelingOffer, { nullable: true, description: 'null when the document holds no ANSWERED version' }) offer!: LevelingOffer | null;
  @Field(() => Int, { nullable: true, description: 'Rank of the offer, 1 for the lowest; equal offers share a rank and the next rank is skipped (1, 1, 3); null without an offer' })
  @Rest({ schema: { minimum: 1 }, example: 1 }) rank!: number | null;
  @Field(() => AmountPercent, { nullable: true, description: 'offer - budget, and as a percent of the budget (0 when the budget is 0)' }) deviationFromBudget!: AmountPercent | null;
  @Field(() => AmountPercent, { nullable: true, description: 'offer - lowest offer, and as a percent of the lowest offer' }) deviationFromLowest!: AmountPercent | null;
  @Field(() => AmountPercent, { nullable: true, description: 'offer - median offer, and as a percent of the median' }) deviationFromMedian!: AmountPercent | null;
  @Field({ description: 'Equal to the lowest offer of the lot' }) lowest!: boolean;
  @Field({ description: 'The retained offer (decisions.md section 5): the selected document\'s offer when it has one, else the lowest ones' }) retained!: boolean;
  @Field({ description: 'The document is the lot\'s selected consultation' }) selected!: boolean;
  @Field({ description: 'Below the median offer by more than the threshold (abnormally_low_below_median_percent)' }) abnormallyLow!: boolean;
}

@ObjectType({ description: 'Figures of a lot\'s offers; the amounts are null while it has none', simpleResolvers: true })
export class LevelingSummary {
  @Field(() => Int, { description: 'Invited documents' }) @Rest({ schema: COUNT, example: 4 }) documents!: number;
  @Field(() => Int, { description: 'Documents with an offer' }) @Rest({ schema: COUNT, example: 3 }) offers!: number;
  @Field(() => Float, { nullable: true }) lowest!: number | null;
  @Field(() => Float, { nullable: true }) highest!: number | null;
  @Field(() => Float, { nullable: true, description: 'Middle offer; the mean of the two middle ones for an even count' }) median!: number | null;
  @Field(() => Float, { nullable: true }) mean!: number | null;
  @Field(() => AmountPercent, { nullable: true, description: 'highest - lowest, and as a percent of the lowest' }) spread!: AmountPercent | null;
  @Field(() => Float) @Rest({ example: 120000 }) budget!: number;
  @Field(() => Float, { nullable: true, description: 'The retained offer\'s amount (decisions.md section 5)' }) retained!: number | null;
  @Field(() => AmountPercent, { nullable: true, description: 'retained - budget, and as a percent of the budget' }) retainedDeviation!: AmountPercent | null;
  @Field(() => Int, { description: 'Offers flagged abnormally low' }) @Rest({ schema: COUNT, example: 0 }) abnormallyLow!: number;
}

@ObjectType({ description: 'The bid leveling of a lot: a template, or a slice (its own lot)', simpleResolvers: true })
export class TemplateLeveling {
  @Field(() => ID) templateId!: string;
  @Field({ description: 'The trade\'s name, with " - <slice>" for a slice' }) @Rest({ example: 'Gros œuvre' }) name!: string;
  @Field(() => ID) tradeId!: string;
  @Field() @Rest({ example: '01' }) tradeNumber!: string;
  @Field() isSlice!: boolean;
  @Field(() => String, { nullable: true }) slice!: string | null;
  @Field(() => ID, { nullable: true }) selectedConsultationId!: string | null;
  @Field(() => Float, { description: 'The threshold the abnormally_low flags were computed with' }) @Rest({ schema: PERCENT, example: 20 }) abnormallyLowBelowMedianPercent!: number;
  @Field(() => LevelingSummary) summary!: LevelingSummary;
  @Field(() => [LevelingEntry]) documents!: LevelingEntry[];
}

@ObjectType({ description: 'A contractor column of the lots × contractors matrix', simpleResolvers: true })
export class LevelingColumn {
  @Field(() => ID) contractorId!: string;
  @Field() @Rest({ example: 'Bâtiments Durand' }) contractorName!: string;
}

@ObjectType({ description: 'A contractor\'s cell on a lot row: empty (nulls) when the contractor holds no document on the lot', simpleResolvers: true })
export class LevelingCell {
  @Field(() => ID) contractorId!: string;
  @Field(() => ID, { nullable: true }) documentId!: string | null;
  @Field(() => DocumentStateEnum, { nullable: true }) state!: string | null;
  @Field(() => Float, { nullable: true, description: 'The offer\'s amount' }) amount!: number | null;
  @Field(() => Int, { nullable: true }) rank!: number | null;
  @Field() lowest!: boolean;
  @Field() retained!: boolean;
  @Field() abnormallyLow!: boolean;
}

@ObjectType({ description: 'A lot row of the matrix, one cell per column, in the columns\' order', simpleResolvers: true })
export class LevelingRow {
  @Field(() => ID) templateId!: string;
  @Field() @Rest({ example: 'Gros œuvre' }) name!: string;
  @Field(() => Float) @Rest({ example: 120000 }) budget!: number;
  @Field(() => Float, { nullable: true }) lowest!: number | null;
  @Field(() => Float, { nullable: true }) retained!: number | null;
  @Field(() => [LevelingCell]) cells!: LevelingCell[];
}

@ObjectType({ description: 'A lot with no offer yet', simpleResolvers: true })
export class LevelingLot {
  @Field(() => ID) templateId!: string;
  @Field() @Rest({ example: 'Plomberie' }) name!: string;
  @Field(() => Float) @Rest({ example: 39000 }) budget!: number;
  @Field(() => Int, { description: 'Invited documents' }) @Rest({ schema: COUNT, example: 2 }) documents!: number;
}

@ObjectType({ description: 'Sums of a project\'s lots against its total budget (lots without an offer add 0 to the sums of offers)', simpleResolvers: true })
export class LevelingTotals {
  @Field(() => Int) @Rest({ schema: COUNT, example: 6 }) lots!: number;
  @Field(() => Int) @Rest({ schema: COUNT, example: 3 }) lotsWithOffers!: number;
  @Field(() => Float, { description: 'Sum of the budgets of every lot' }) @Rest({ example: 355500.5 }) budget!: number;
  @Field(() => Float, { description: 'Sum of the budgets of the lots with an offer' }) @Rest({ example: 278500.5 }) offeredLotsBudget!: number;
  @Field(() => Float, { description: 'Sum of the lowest offer of every lot' }) @Rest({ example: 277799.5 }) lowest!: number;
  @Field(() => AmountPercent, { description: 'lowest - budget, and as a percent of the budget' }) lowestDeviation!: AmountPercent;
  @Field(() => Float, { description: 'Sum of the retained offer of every lot' }) @Rest({ example: 279799.5 }) retained!: number;
  @Field(() => AmountPercent, { description: 'retained - budget, and as a percent of the budget' }) retainedDeviation!: AmountPercent;
}

@ObjectType({ description: 'The bid leveling of a project: its lots, the lots × contractors matrix and the sums against the budget', simpleResolvers: true })
export class ProjectLeveling {
  @Field(() => ID) projectId!: string;
  @Field() @Rest({ example: 'Résidence Les Tilleuls – 42 logements' }) name!: string;
  @Field(() => CurrencyEnum, { nullable: true }) currency!: string | null;
  @Field({ description: 'Archived projects stay readable' }) archived!: boolean;
  @Field(() => Float, { description: 'The threshold the abnormally_low flags were computed with' }) @Rest({ schema: PERCENT, example: 20 }) abnormallyLowBelowMedianPercent!: number;
  @Field(() => [TemplateLeveling], { description: 'Lots by trade number, each template before its slices' }) lots!: TemplateLeveling[];
  @Field(() => [LevelingColumn], { description: 'Contractors with an offer on at least one lot, by name: each once' }) contractors!: LevelingColumn[];
  @Field(() => [LevelingRow], { description: 'One row per lot, in the order of `lots`' }) matrix!: LevelingRow[];
  @Field(() => LevelingTotals) totals!: LevelingTotals;
  @Field(() => [LevelingLot]) lotsWithoutOffers!: LevelingLot[];
}
