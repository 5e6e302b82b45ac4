import { Arg, Args, Ctx, FieldResolver, ID, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { ContractorService } from '../contractors/contractor.service';
import { CreditsService } from './credits.service';
import { CreditsUsageQuery } from './credits.input';
import { TradeListService, type TradeListTradeView, type TradeListView } from '../trades/trade-list.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { Contractor } from '../contractors/contractor.output';
import { CreditsUsage } from './directory.output';
import { TradeList, TradeListTrade } from '../trades/trade-list.output';

/** Trade lists, the contractor directory and credits usage. */
@Resolver(() => TradeList)
export class DirectoryResolver {
  @Query(() => [TradeList], { description: 'Public trade lists and those of the caller\'s organizations' })
  tradeLists(@Ctx() { sc }: GraphQLContext) {
    return new TradeListService(sc).list();
  }

  @UseMiddleware(uuidArguments)
  @Query(() => TradeList)
  tradeList(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new TradeListService(sc).get(id);
  }

  @FieldResolver(() => [TradeListTrade], { description: 'The trades of the list, by number' })
  trades(@Root() list: TradeListView & { trades?: TradeListTradeView[] }, @Ctx() { loaders }: GraphQLContext) {
    // `tradeList(id)` read them with the list; `tradeLists` did not.
    return list.trades ?? loaders.tradeListTrades.load(list.id);
  }

  @UseMiddleware(uuidArguments)
  @Query(() => Contractor, { description: 'A contractor of the current organization\'s directory' })
  contractor(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new ContractorService(sc).get(id);
  }

  // Its ids are validated with the other arguments by CreditsUsageQuery, so every failing one is listed.
  @Query(() => CreditsUsage, { description: 'Credits consumed over a period (same rules as GET /api/v1/credits-usage)' })
  creditsUsage(@Args(() => CreditsUsageQuery) query: CreditsUsageQuery, @Ctx() { sc }: GraphQLContext) {
    return new CreditsService(sc).usage(query);
  }
}
