import { Field, ID, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { Rest, RestRecord } from '../../platform/outputs/output';

@ObjectType({ description: 'A trade of a trade list (the model a project\'s trades are copied from)', simpleResolvers: true })
export class TradeListTrade {
  @Field(() => ID) @Rest({ example: DEMO_IDS.tradeListTrades.standard['01'] }) id!: string;
  @Field() @Rest({ example: '01' }) number!: string;
  @Field() @Rest({ example: 'Gros œuvre' }) name!: string;
  @Field() @Rest({ example: 'GO' }) shortName!: string;
}

/** `trades` resolves through a DataLoader (or from the root when the service already read them). */
@ObjectType({ simpleResolvers: true })
@RestRecord({ description: 'A trade list: a reusable catalogue of trades' })
export class TradeList {
  @Field(() => ID) @Rest({ example: DEMO_IDS.tradeLists.standard }) id!: string;
  @Field() @Rest({ example: 'Lots standard bâtiment' }) name!: string;
  @Field(() => ID, { nullable: true, description: 'null for a public list' }) @Rest({ example: null }) organizationId!: string | null;
  @Field(() => Date) @Rest({ example: '2026-01-02T08:00:00.000000Z' }) createdAt!: Date;
  @Field(() => Date) @Rest({ example: '2026-01-02T08:00:00.000000Z' }) updatedAt!: Date;
}

/** #24: REST sends the list's trades with it. */
@RestRecord({ description: 'A trade list with its trades' })
export class TradeListWithTrades extends TradeList {
  @Rest(() => [TradeListTrade]) trades!: TradeListTrade[];
}
