import { CreateProjectTradeInput, UpdateProjectTradeInput } from './project-trade.input';
import { ProjectParams, ProjectTradeParams } from '../../platform/rest/params';
import { ProjectTradeService } from './project-trade.service';
import { ProjectTrade } from './project-trade.output';
import { keyed, keyedList, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

const tag = 'Project trades';

const ONE_TRADE = keyed('trade', ProjectTrade);

/** Operations #6-#9. */
export const tradeRoutes: RouteDef[] = [
  route({
    operation: 6, operationId: 'listProjectTrades', method: 'get', prefix: 'svc', path: '/projects/:projectId/trades', tag,
    summary: 'Trades (lots) of the project, by number.',
    params: ProjectParams,
    success: { status: 200, description: '`{ trades }`', schema: keyedList('trades', ProjectTrade) },
    async handler({ params, ...sc }) {
      return { body: { trades: toRest(await new ProjectTradeService(sc).list(params.projectId)) } };
    },
  }),
  route({
    operation: 7, operationId: 'createProjectTrade', method: 'post', prefix: 'svc', path: '/projects/:projectId/trades', tag,
    summary: 'Adds a trade to the project (`comment` is not accepted here).',
    params: ProjectParams,
    body: CreateProjectTradeInput,
    success: { status: 201, description: '`{ trade }`', schema: ONE_TRADE },
    errors: [409],
    async handler({ params, body, ...sc }) {
      return { body: { trade: toRest(await new ProjectTradeService(sc).create(params.projectId, body)) } };
    },
  }),
  route({
    operation: 8, operationId: 'updateProjectTrade', method: 'put', prefix: 'svc', path: '/projects/:projectId/trades/:tradeId', tag,
    summary: 'Updates a trade; `comment` left out is kept, null removes it.',
    params: ProjectTradeParams,
    body: UpdateProjectTradeInput,
    success: { status: 200, description: '`{ trade }`', schema: ONE_TRADE },
    errors: [409],
    async handler({ params, body, ...sc }) {
      return { body: { trade: toRest(await new ProjectTradeService(sc).update(params.projectId, params.tradeId, body)) } };
    },
  }),
  route({
    operation: 9, operationId: 'deleteProjectTrade', method: 'delete', prefix: 'svc', path: '/projects/:projectId/trades/:tradeId', tag,
    summary: 'Deletes a trade that has no templates (409 otherwise).',
    params: ProjectTradeParams,
    success: { status: 204, description: 'Deleted' },
    errors: [409],
    async handler({ params, ...sc }) {
      await new ProjectTradeService(sc).delete(params.projectId, params.tradeId);
      return { body: null };
    },
  }),
];
