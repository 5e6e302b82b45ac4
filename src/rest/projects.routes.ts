import { CreateProjectInput, ListProjectsQuery } from '../services/inputs/project.input';
import { ProjectParams } from '../services/inputs/params';
import { pageSize } from '../services/pagination';
import { ProjectService, projectFields } from '../services/project.service';
import { CONSTRUCTION_TYPES, CURRENCIES, RESPONSE_TYPES, type Project } from '../entities/project.entity';
import { route, type JsonSchema, type RouteDef } from './route';
import { listBody, toRest } from './serialize';

const tag = 'Projects';

const DAY: JsonSchema = { type: ['string', 'null'], format: 'date' };
const TIMESTAMP: JsonSchema = { type: 'string', format: 'date-time' };
const NUMBER_OR_NULL: JsonSchema = { type: ['number', 'null'] };
/** The project read form (decisions.md section 2): every create-input field, plus archive state and times. */
const PROJECT: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    legacy_id: { type: 'string', minLength: 17, maxLength: 17 },
    name: { type: 'string' },
    organization_id: { type: 'string', format: 'uuid' },
    construction_type: { type: 'string', enum: [...CONSTRUCTION_TYPES] },
    managers: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, first_name: { type: 'string' }, last_name: { type: 'string' }, email: { type: 'string' } } },
    },
    trade_list_id: { type: 'string', format: 'uuid' },
    response_type: { type: 'string', enum: [...RESPONSE_TYPES] },
    end_of_offer_date: DAY,
    end_works_construction: DAY,
    commencement_works_construction: DAY,
    tenders_closing_activated: { type: 'boolean' },
    published_on_marketplace: { type: 'boolean' },
    scopes: {
      type: ['object', 'null'],
      properties: { currency: { type: ['string', 'null'], enum: [...CURRENCIES, null] }, vat: { type: 'number' }, prorate: NUMBER_OR_NULL, levels: NUMBER_OR_NULL },
    },
    site_address: { type: ['object', 'null'], properties: { number: NUMBER_OR_NULL, zip_code: NUMBER_OR_NULL } },
    optional_dates: { type: ['object', 'null'], properties: { noc: DAY, responses_opening_date: DAY } },
    archived: { type: 'boolean' },
    archived_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  },
};
const ONE_PROJECT: JsonSchema = { type: 'object', required: ['project'], properties: { project: PROJECT } };
const PROJECT_LIST: JsonSchema = {
  type: 'object',
  required: ['projects'],
  properties: {
    projects: { type: 'array', items: PROJECT },
    next_cursor: { type: ['string', 'null'], description: 'Only when `limit` is sent: the `cursor` of the next page, null on the last one' },
    total_count: { type: 'integer', description: 'Only when `limit` is sent: the number of projects of the whole list' },
  },
};

/** `{ project }`: the full read form of one project. */
async function projectBody(service: ProjectService, project: Project): Promise<{ project: unknown }> {
  const [view] = await service.views([projectFields(project)]);
  return { project: toRest(view) };
}

/** Operations #1-#4. */
export const projectRoutes: RouteDef[] = [
  route({
    operation: 1, operationId: 'listProjects', method: 'get', prefix: 'svc', path: '/projects', tag,
    summary: 'Projects of the organizations where the caller is Administrator (archived ones only with archived=true). Paged when `limit` is sent.',
    query: ListProjectsQuery,
    success: { status: 200, description: '`{ projects }`, plus `next_cursor` and `total_count` when paged', schema: PROJECT_LIST },
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
      return { body: await projectBody(service, await service.create(body)) };
    },
  }),
  route({
    operation: 3, operationId: 'getProject', method: 'get', prefix: 'svc', path: '/projects/:projectId', tag,
    summary: 'One project.',
    params: ProjectParams,
    success: { status: 200, description: '`{ project }`', schema: ONE_PROJECT },
    async handler({ params, ...sc }) {
      const service = new ProjectService(sc);
      return { body: await projectBody(service, await service.get(params.projectId)) };
    },
  }),
  route({
    operation: 4, operationId: 'archiveProject', method: 'put', prefix: 'svc', path: '/projects/:projectId/archive', tag,
    summary: 'Archives the project (idempotent); an archived project is read-only.',
    params: ProjectParams,
    success: { status: 200, description: '`{ project }`', schema: ONE_PROJECT },
    async handler({ params, ...sc }) {
      const service = new ProjectService(sc);
      return { body: await projectBody(service, await service.archive(params.projectId)) };
    },
  }),
];
