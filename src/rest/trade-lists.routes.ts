import { TradeListParams } from '../services/inputs/params';
import { TradeListService } from '../services/trade-list.service';
import { route, type JsonSchema, type RouteDef } from './route';
import { toRest } from './serialize';

const tag = 'Trade lists';

const TRADE_LIST_PROPERTIES: Record<string, JsonSchema> = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  organization_id: { type: ['string', 'null'], format: 'uuid', description: 'null for a public list' },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
};

const TRADE: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid' }, number: { type: 'string' }, name: { type: 'string' }, short_name: { type: 'string' } },
};

/** Operations #23-#24. */
export const tradeListRoutes: RouteDef[] = [
  route({
    operation: 23, operationId: 'listTradeLists', method: 'get', prefix: 'svc', path: '/trades/list', tag,
    summary: 'Public trade lists and those of the caller\'s organizations.',
    success: {
      status: 200, description: '`{ trade_lists }`',
      schema: { type: 'object', properties: { trade_lists: { type: 'array', items: { type: 'object', properties: TRADE_LIST_PROPERTIES } } } },
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
      schema: {
        type: 'object',
        properties: { trade_list: { type: 'object', properties: { ...TRADE_LIST_PROPERTIES, trades: { type: 'array', items: TRADE } } } },
      },
    },
    async handler({ params, ...sc }) {
      return { body: { trade_list: toRest(await new TradeListService(sc).get(params.tradeListId)) } };
    },
  }),
];
