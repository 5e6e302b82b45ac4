import { restDocuments } from '../documents/document.presenter';
import { ProjectParams, TemplateParams } from '../../platform/rest/params';
import { AddTemplateInput, ListTemplatesQuery } from './template.input';
import { pageSize } from '../../platform/database/pagination';
import { TemplateService } from './template.service';
import { Template, TemplateDetail, TemplateDocuments } from './template.output';
import { keyed, keyedList, route, type RouteDef } from '../../platform/rest/route';
import { listBody, toRest } from '../../platform/rest/serialize';

const tag = 'Templates';

/** Operations #10-#14 (#15 is the invitations', #16 the documents'), also served under /svc/v1. */
export const templateRoutes: RouteDef[] = [
  route({
    operation: 10, operationId: 'listTemplates', method: 'get', prefix: 'svc', path: '/projects/:projectId/templates', alias: true, tag,
    summary: 'Templates and slices of the project, oldest first, with their statistics. Paged when `limit` is sent.',
    params: ProjectParams,
    query: ListTemplatesQuery,
    success: {
      status: 200,
      description: '`{ templates }`, plus `next_cursor` and `total_count` when paged',
      schema: keyedList('templates', Template, true),
    },
    async handler({ params, query, ...sc }) {
      const service = new TemplateService(sc);
      const limit = pageSize(query.limit);
      const page = await service.list(params.projectId, { first: limit, after: query.cursor });
      const templates = toRest(await service.views(page.items));
      return { body: listBody('templates', templates, page, !!limit) };
    },
  }),
  route({
    operation: 11, operationId: 'addTemplate', method: 'post', prefix: 'svc', path: '/projects/:projectId/templates', alias: true, tag,
    summary: 'Adds the trade\'s template, or a slice of it when the trade already has one (named `slice_name`, else "Tranche N").',
    params: ProjectParams,
    body: AddTemplateInput,
    success: { status: 201, description: '`{ template }`: the template record', schema: keyed('template', Template) },
    errors: [409],
    async handler({ params, body, ...sc }) {
      const service = new TemplateService(sc);
      const created = await service.create(params.projectId, body);
      const [template] = await service.views([await service.get(created.project.id, created.id)]);
      return { body: { template: toRest(template) } };
    },
  }),
  route({
    operation: 12, operationId: 'listTemplateDocuments', method: 'get', prefix: 'svc', path: '/projects/:projectId/templates/documents', alias: true, tag,
    summary: 'Templates and slices of the project with their contractors\' documents, oldest first. Paged (by template) when `limit` is sent.',
    params: ProjectParams,
    query: ListTemplatesQuery,
    success: {
      status: 200,
      description: '`{ templates: [{ id, name, is_slice, slice, trade, documents }] }`, plus `next_cursor` and `total_count` when paged',
      schema: keyedList('templates', TemplateDocuments, true),
    },
    async handler({ params, query, ...sc }) {
      const service = new TemplateService(sc);
      const limit = pageSize(query.limit);
      const page = await service.list(params.projectId, { first: limit, after: query.cursor });
      const templates = (await service.withDocuments(page.items)).map(({ documents: docs, ...t }) => ({ ...(toRest(t) as object), documents: restDocuments(docs) }));
      return { body: listBody('templates', templates, page, !!limit) };
    },
  }),
  route({
    operation: 13, operationId: 'getTemplate', method: 'get', prefix: 'svc', path: '/projects/:projectId/templates/:templateId', alias: true, tag,
    summary: 'A template or slice with its contractors\' documents and their versions. `name` is the trade\'s name, followed by " - <slice>" for a slice.',
    params: TemplateParams,
    success: { status: 200, description: '`{ template: { id, name, documents } }`', schema: keyed('template', TemplateDetail) },
    async handler({ params, ...sc }) {
      const detail = await new TemplateService(sc).detail(params.projectId, params.templateId);
      return { body: { template: { id: detail.id, name: detail.name, documents: restDocuments(detail.documents) } } };
    },
  }),
  route({
    operation: 14, operationId: 'deleteTemplate', method: 'delete', prefix: 'svc', path: '/projects/:projectId/templates/:templateId', alias: true, tag,
    summary: 'Deletes a slice, or a template with its slices; refused (409) when any of them holds an ANSWERED version.',
    params: TemplateParams,
    success: { status: 204, description: 'Deleted' },
    errors: [409],
    async handler({ params, ...sc }) {
      await new TemplateService(sc).remove(params.projectId, params.templateId);
      return { status: 204, body: null };
    },
  }),
];
