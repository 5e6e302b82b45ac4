import { CreateProjectInput, ListProjectsQuery } from '../services/inputs/project.input';
import { ProjectParams } from '../services/inputs/params';
import { pageSize } from '../services/pagination';
import { ProjectService } from '../services/project.service';
import { route, type RouteDef } from './route';
import { toRest } from './serialize';

const tag = 'Projects';

/** Operations #1-#4. */
export const projectRoutes: RouteDef[] = [
  route({
    operation: 1, operationId: 'listProjects', method: 'get', prefix: 'svc', path: '/projects', tag,
    summary: 'Projects of the organizations where the caller is Administrator (archived ones only with archived=true). Paged when `limit` is sent.',
    query: ListProjectsQuery,
    success: { status: 200, description: '`{ projects }`, plus `next_cursor` when paged' },
    async handler({ query, ...sc }) {
      const service = new ProjectService(sc);
      const limit = pageSize(query.limit);
      const page = await service.list({ organizationId: query.organizationId, archived: query.archived === 'true', first: limit, after: query.cursor });
      const projects = toRest(await service.views(page.items));
      return { body: limit ? { projects, next_cursor: page.hasNextPage ? page.endCursor : null, total_count: page.totalCount } : { projects } };
    },
  }),
  route({
    operation: 2, operationId: 'createProject', method: 'post', prefix: 'svc', path: '/projects', tag,
    summary: 'Creates a project; the trades of the chosen trade list are copied into it.',
    body: CreateProjectInput,
    success: { status: 201, description: '`{ project }`' },
    async handler({ body, ...sc }) {
      const service = new ProjectService(sc);
      const [project] = await service.views([await service.create(body)]);
      return { body: { project: toRest(project) } };
    },
  }),
  route({
    operation: 3, operationId: 'getProject', method: 'get', prefix: 'svc', path: '/projects/:projectId', tag,
    summary: 'One project.',
    params: ProjectParams,
    success: { status: 200, description: '`{ project }`' },
    async handler({ params, ...sc }) {
      const service = new ProjectService(sc);
      const [project] = await service.views([await service.get(params.projectId)]);
      return { body: { project: toRest(project) } };
    },
  }),
  route({
    operation: 4, operationId: 'archiveProject', method: 'put', prefix: 'svc', path: '/projects/:projectId/archive', tag,
    summary: 'Archives the project (idempotent); an archived project is read-only.',
    params: ProjectParams,
    success: { status: 200, description: '`{ project }`' },
    async handler({ params, ...sc }) {
      const service = new ProjectService(sc);
      const [project] = await service.views([await service.archive(params.projectId)]);
      return { body: { project: toRest(project) } };
    },
  }),
];
