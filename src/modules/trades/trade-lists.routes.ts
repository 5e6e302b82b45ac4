import { TradeListParams } from '../../platform/rest/params';
import { TradeListService } from './trade-list.service';
import { TradeList, TradeListWithTrades } from './trade-list.output';
import { keyed, keyedList, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

const tag = 'Trade lists';

/** Operations #23-#24. */
export const tradeListRoutes: RouteDef[] = [
  route({
    operation: 23, operationId: 'listTradeLists', method: 'get', prefix: 'svc', path: '/trades/list', tag,
    summary: 'Public trade lists and those of the caller\'s organizations.',
    success: {
      status: 200, description: '`{ trade_lists }`',
      schema: keyedList('trade_lists', TradeList),
    },
    async handler(sc) {
      return { body: { trade_lists: toRest(await new TradeListService(sc).list()) } };
    },
  }),
  route({
    operation: 24, operationId: 'getTradeList', method: 'get', prefix: 'svc', path: '/trades/list/:tradeListId', tag,
    summary: 'A trade list with its trades.',
    params: TradeListParams,
    success: {
      status: 200, description: '`{ trade_list }` with its `trades`',
      schema: keyed('trade_list', TradeListWithTrades),
    },
    async handler({ params, ...sc }) {
      return { body: { trade_list: toRest(await new TradeListService(sc).get(params.tradeListId)) } };
    },
  }),
];
