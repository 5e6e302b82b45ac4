import { CreateProjectTradeInput, UpdateProjectTradeInput } from '../services/inputs/project-trade.input';
import { ProjectParams, ProjectTradeParams } from '../services/inputs/params';
import { ProjectTradeService } from '../services/project-trade.service';
import { route, type JsonSchema, type RouteDef } from './route';
import { toRest } from './serialize';

const tag = 'Project trades';

const TIMESTAMP: JsonSchema = { type: 'string', format: 'date-time' };
const TRADE: JsonSchema = {
  type: 'object',
  required: ['id', 'number', 'name', 'short_name', 'comment', 'project_id', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    number: { type: 'string' },
    name: { type: 'string' },
    short_name: { type: 'string' },
    comment: { type: ['string', 'null'] },
    project_id: { type: 'string', format: 'uuid' },
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  },
};
const ONE_TRADE: JsonSchema = { type: 'object', required: ['trade'], properties: { trade: TRADE } };

/** Operations #6-#9. */
export const tradeRoutes: RouteDef[] = [
  route({
    operation: 6, operationId: 'listProjectTrades', method: 'get', prefix: 'svc', path: '/projects/:projectId/trades', tag,
    summary: 'Trades (lots) of the project, by number.',
    params: ProjectParams,
    success: { status: 200, description: '`{ trades }`', schema: { type: 'object', required: ['trades'], properties: { trades: { type: 'array', items: TRADE } } } },
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
