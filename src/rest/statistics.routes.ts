import { ProjectParams } from '../services/inputs/params';
import { StatisticsService } from '../services/statistics.service';
import { route, type JsonSchema, type RouteDef } from './route';
import { toRest } from './serialize';

const integer: JsonSchema = { type: 'integer', minimum: 0 };
const money: JsonSchema = { type: 'number' };
const amountPercent: JsonSchema = {
  type: 'object',
  required: ['value', 'percent'],
  properties: { value: money, percent: { type: 'number', description: 'value / total x 100, 0 when total is 0' } },
};

/** interface.md "Project statistics", under `project` as decisions.md section 2 says. */
const STATISTICS_BODY: JsonSchema = {
  type: 'object',
  required: ['project'],
  properties: {
    project: {
      type: 'object',
      required: ['id', 'statistics'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        statistics: {
          type: 'object',
          required: ['answered', 'may_answer', 'declined', 'contractors', 'tender_documents', 'budgets'],
          properties: {
            answered: integer,
            may_answer: integer,
            declined: integer,
            contractors: integer,
            tender_documents: integer,
            budgets: {
              type: 'object',
              required: ['total', 'simulated_cost', 'total_anticipated_trades', 'total_anticipated_offers', 'budget_trades_to_assign', 'project_deviation'],
              properties: {
                total: money,
                simulated_cost: money,
                total_anticipated_trades: money,
                total_anticipated_offers: money,
                budget_trades_to_assign: amountPercent,
                project_deviation: amountPercent,
              },
            },
          },
        },
      },
    },
  },
};

/** Operations #5. */
export const statisticsRoutes: RouteDef[] = [
  route({
    operation: 5, operationId: 'getProjectStatistics', method: 'get', prefix: 'svc', path: '/projects/:projectId/statistics',
    alias: true, tag: 'Projects',
    summary: 'Answers, contractor counts, consultation-file downloads and budgets of a project (archived ones included).',
    params: ProjectParams,
    success: { status: 200, description: '`{ project: { id, statistics } }`', schema: STATISTICS_BODY },
    async handler({ params, ...sc }) {
      const statistics = await new StatisticsService(sc).ofProject(params.projectId);
      return { body: { project: { id: params.projectId.toLowerCase(), statistics: toRest(statistics) } } };
    },
  }),
];
