import { DocumentService } from '../documents/document.service';
import { restDocuments } from '../documents/document.presenter';
import { InvitationService } from '../invitations/invitation.service';
import { InviteContractorsInput } from '../invitations/invitation.input';
import { DocumentParams, DocumentVersionParams, ProjectParams, TemplateParams } from '../../platform/rest/params';
import { AddTemplateInput, ListTemplatesQuery } from './template.input';
import { pageSize } from '../../platform/database/pagination';
import { TemplateService } from './template.service';
import { Document, FileDownload, VersionFiles } from '../documents/document.output';
import { Template, TemplateDetail, TemplateDocuments } from './template.output';
import { keyed, keyedList, route, type RouteDef } from '../../platform/rest/route';
import { listBody, toRest } from '../../platform/rest/serialize';

const tag = 'Templates';

/** Operations #10-#16, also served under /svc/v1. */
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
  route({
    operation: 15, operationId: 'inviteContractors', method: 'post', prefix: 'svc', path: '/projects/:projectId/templates/:templateId/contractors', alias: true, tag,
    summary: 'Invites contractors (reused by email from the organization\'s directory): one document each; each new document consumes 1 credit. 201 when a document was created, else 200.',
    params: TemplateParams,
    body: InviteContractorsInput,
    success: {
      status: 201, description: '`{ documents }` of the invited contractors; at least one document was created',
      schema: keyedList('documents', Document), also: { status: 200, description: '`{ documents }`: every contractor was already invited; nothing was created or consumed' },
    },
    errors: [409],
    async handler({ params, body, ...sc }) {
      const result = await new InvitationService(sc).invite(params.projectId, params.templateId, body);
      return { status: result.created > 0 ? 201 : 200, body: { documents: restDocuments(result.documents) } };
    },
  }),
  // Without a version and with one, #16 answers two different things: two operations of the document.
  route({
    operation: 16, operationId: 'listDocumentVersions', method: 'get', prefix: 'svc',
    path: '/projects/:projectId/templates/:templateId/documents/:documentId/download', alias: true, tag,
    summary: 'The document\'s versions and their files.',
    description: 'Without a version in the path.',
    params: DocumentParams,
    success: { status: 200, description: '`{ versions: [{ version, status, sent_at, files: [{ name, size }] }] }`', schema: keyedList('versions', VersionFiles) },
    async handler({ params, ...sc }) {
      return { body: { versions: toRest(await new DocumentService(sc).versionFiles(params.projectId, params.templateId, params.documentId)) } };
    },
  }),
  route({
    operation: 16, operationId: 'downloadDocumentVersion', method: 'get', prefix: 'svc',
    path: '/projects/:projectId/templates/:templateId/documents/:documentId/download/:version', alias: true, tag,
    summary: 'A signed URL per file of a version of the document, valid 15 minutes, served by the service at /files/{fileId}.',
    description: 'With a version in the path; an unknown version is a 404.',
    params: DocumentVersionParams,
    success: { status: 200, description: '`{ files: [{ name, url, expires_at }] }`', schema: keyedList('files', FileDownload) },
    async handler({ params, ...sc }) {
      return { body: { files: toRest(await new DocumentService(sc).versionDownload(params.projectId, params.templateId, params.documentId, params.version)) } };
    },
  }),
];
