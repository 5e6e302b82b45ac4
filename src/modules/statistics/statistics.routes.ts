import { ProjectParams } from '../../platform/rest/params';
import { StatisticsService } from './statistics.service';
import { ref } from '../../platform/outputs/output';
import { ProjectStatistics } from './statistics.output';
import { DEMO_IDS } from '../examples';
import { route, type JsonSchema, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

/** interface.md "Project statistics", under `project` as decisions.md section 2 says. */
const STATISTICS_BODY: JsonSchema = {
  type: 'object',
  required: ['project'],
  properties: {
    project: {
      type: 'object',
      required: ['id', 'statistics'],
      properties: { id: { type: 'string', format: 'uuid', examples: [DEMO_IDS.projects.residence] }, statistics: ref(ProjectStatistics) },
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
