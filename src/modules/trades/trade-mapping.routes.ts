import { TradeIdParams, TradeNameParams } from '../../platform/rest/params';
import { ServiceTradeParams } from '../tools/tools.input';
import { TradeMappingService } from './trade-mapping.service';
import { TradeCategory } from '../companies/company.output';
import { keyedList, route, type RouteDef } from '../../platform/rest/route';

const tag = 'Trade categories';

const success = { status: 200, description: '`{ categories }`; 404 when no category is mapped to the trade', schema: keyedList('categories', TradeCategory) };

/** Operations #29-#31; the fixed segments come first so `svc` and `partner` are not read as trade names. */
export const tradeMappingRoutes: RouteDef[] = [
  route({
    operation: 30, operationId: 'tradeCategoriesByServiceTradeId', method: 'get', prefix: 'internal', path: '/trades/mapping/svc/:tradeId', tag,
    summary: 'Trade categories of a service trade (the UUID of a trade-list trade).',
    params: ServiceTradeParams,
    success,
    async handler({ params, ...sc }) {
      return { body: { categories: await new TradeMappingService(sc).byServiceTradeId(params.tradeId) } };
    },
  }),
  route({
    operation: 31, operationId: 'tradeCategoriesByPartnerTradeId', method: 'get', prefix: 'internal', path: '/trades/mapping/partner/:tradeId', tag,
    summary: 'Trade categories of a partner-platform trade.',
    params: TradeIdParams,
    success,
    async handler({ params, ...sc }) {
      return { body: { categories: await new TradeMappingService(sc).byPartnerTradeId(params.tradeId) } };
    },
  }),
  route({
    operation: 29, operationId: 'tradeCategoriesByName', method: 'get', prefix: 'internal', path: '/trades/mapping/:tradeName', tag,
    summary: 'Trade categories of a trade name (case and accent insensitive).',
    params: TradeNameParams,
    success,
    async handler({ params, ...sc }) {
      return { body: { categories: await new TradeMappingService(sc).byName(params.tradeName) } };
    },
  }),
];
