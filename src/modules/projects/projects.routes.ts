import { CreateProjectInput, ListProjectsQuery } from './project.input';
import { ProjectParams } from '../../platform/rest/params';
import { pageSize } from '../../platform/database/pagination';
import { ProjectService } from './project.service';
import { Project } from './project.output';
import { keyed, keyedList, route, type RouteDef } from '../../platform/rest/route';
import { listBody, toRest } from '../../platform/rest/serialize';

const tag = 'Projects';

const ONE_PROJECT = keyed('project', Project);

/** `{ project }`: the full read form of one project, as read (after a write too). */
async function projectBody(service: ProjectService, projectId: string): Promise<{ project: unknown }> {
  const [view] = await service.views([await service.get(projectId)]);
  return { project: toRest(view) };
}

/** Operations #1-#4. */
export const projectRoutes: RouteDef[] = [
  route({
    operation: 1, operationId: 'listProjects', method: 'get', prefix: 'svc', path: '/projects', tag,
    summary: 'Projects of the organizations where the caller is Administrator (archived ones only with archived=true). Paged when `limit` is sent.',
    query: ListProjectsQuery,
    success: { status: 200, description: '`{ projects }`, plus `next_cursor` and `total_count` when paged', schema: keyedList('projects', Project, true) },
    async handler({ query, ...sc }) {
      const service = new ProjectService(sc);
      const limit = pageSize(query.limit);
      const page = await service.list({ organizationId: query.organizationId, archived: query.archived === 'true', first: limit, after: query.cursor, afterField: 'cursor' });
      return { body: listBody('projects', toRest(await service.views(page.items)), page, !!limit) };
    },
  }),
  route({
    operation: 2, operationId: 'createProject', method: 'post', prefix: 'svc', path: '/projects', tag,
    summary: 'Creates a project; the trades of the chosen trade list are copied into it.',
    body: CreateProjectInput,
    success: { status: 201, description: '`{ project }`', schema: ONE_PROJECT },
    async handler({ body, ...sc }) {
      const service = new ProjectService(sc);
      return { body: await projectBody(service, (await service.create(body)).id) };
    },
  }),
  route({
    operation: 3, operationId: 'getProject', method: 'get', prefix: 'svc', path: '/projects/:projectId', tag,
    summary: 'One project.',
    params: ProjectParams,
    success: { status: 200, description: '`{ project }`', schema: ONE_PROJECT },
    async handler({ params, ...sc }) {
      const service = new ProjectService(sc);
      return { body: await projectBody(service, params.projectId) };
    },
  }),
  route({
    operation: 4, operationId: 'archiveProject', method: 'put', prefix: 'svc', path: '/projects/:projectId/archive', tag,
    summary: 'Archives the project (idempotent); an archived project is read-only.',
    params: ProjectParams,
    success: { status: 200, description: '`{ project }`', schema: ONE_PROJECT },
    async handler({ params, ...sc }) {
      const service = new ProjectService(sc);
      return { body: await projectBody(service, (await service.archive(params.projectId)).id) };
    },
  }),
];
