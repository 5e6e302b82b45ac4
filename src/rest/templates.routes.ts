import { DocumentService, type DocumentView } from '../services/document.service';
import { InvitationService } from '../services/invitation.service';
import { InviteContractorsInput } from '../services/inputs/invitation.input';
import { DocumentDownloadParams, ProjectParams, TemplateParams } from '../services/inputs/params';
import { AddTemplateInput, ListTemplatesQuery } from '../services/inputs/template.input';
import { pageSize } from '../services/pagination';
import { TemplateService, templateFields } from '../services/template.service';
import { route, type JsonSchema, type RouteDef } from './route';
import { listBody, toRest } from './serialize';

const tag = 'Templates';

const uuid: JsonSchema = { type: 'string', format: 'uuid' };
const nullableUuid: JsonSchema = { type: ['string', 'null'], format: 'uuid' };
const timestamp: JsonSchema = { type: 'string', format: 'date-time' };
const nullableTimestamp: JsonSchema = { type: ['string', 'null'], format: 'date-time' };
const integer: JsonSchema = { type: 'integer' };
const object = (properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({
  type: 'object', required: Object.keys(properties), properties, ...extra,
});

const TRADE = object({ id: uuid, name: { type: 'string' }, number: { type: 'string' }, short_name: { type: 'string' } });

/** interface.md "Template record". */
const TEMPLATE_RECORD = object({
  id: uuid,
  project_id: uuid,
  is_slice: { type: 'boolean' },
  slice: { type: ['string', 'null'], description: 'Slice name; null when the template is not a slice' },
  closed_at: nullableTimestamp,
  version_saved: integer,
  response_type: { type: ['string', 'null'], description: 'DPGF, DPGF_QUOTE or QUOTE' },
  budgets: object({ value: { type: 'number' } }),
  itemised_sheet: object({ version: integer, is_draft: { type: 'boolean' }, has_additional_services: { type: 'boolean' } }),
  trade: TRADE,
  end_of_offer_date: nullableTimestamp,
  consultation_started_at: nullableTimestamp,
  fold_opened: { type: 'boolean' },
  favourite_consultation_id: nullableUuid,
  selected_consultation_id: nullableUuid,
  stats: object({
    delta_budget: { type: 'number' },
    contractors: integer,
    contractors_answers: integer,
    contractors_pending: integer,
    contractors_declined: integer,
    contractors_in_revision: integer,
    contractors_intention_is_no: integer,
    contractors_intention_is_maybe: integer,
  }),
  created_at: timestamp,
  updated_at: timestamp,
});

/** A document of interface.md "Template detail", plus its `state`. */
const DOCUMENT = object({
  id: uuid,
  contractor: object({ id: uuid, name: { type: 'string' }, information: object({ fiscal_number: { type: ['string', 'null'] } }), email: { type: 'string' } }),
  dce_downloaded_at: nullableTimestamp,
  intention: { type: ['string', 'null'], enum: ['YES', 'NO', 'MAYBE', null] },
  state: { type: 'string', enum: ['PENDING', 'ANSWERED', 'IN_REVISION', 'DECLINED'], description: 'Status of the latest version; PENDING when none or a draft' },
  versions: {
    type: 'array',
    items: object({
      is_mandate: { type: 'string', enum: ['true', 'false'] },
      version: integer,
      sub_total: { type: 'number' },
      discount: { type: 'number' },
      sent_at: { ...nullableTimestamp, description: 'null for a draft' },
      status: { type: 'string', enum: ['DRAFT', 'ANSWERED', 'IN_REVISION', 'DECLINED'] },
      has_files: { type: 'boolean' },
      has_dpgf: { type: 'boolean' },
    }),
  },
});

const documents: JsonSchema = { type: 'array', items: DOCUMENT };
const paging = { next_cursor: { type: ['string', 'null'] }, total_count: integer };

/** Documents in REST form: `is_mandate` is a string holding `true` or `false` (interface.md). */
function restDocuments(docs: DocumentView[]): unknown {
  return toRest(docs.map((d) => ({ ...d, versions: d.versions.map(({ isMandate, ...v }) => ({ isMandate: String(isMandate), ...v })) })));
}

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
      schema: { type: 'object', required: ['templates'], properties: { templates: { type: 'array', items: TEMPLATE_RECORD }, ...paging } },
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
    success: { status: 201, description: '`{ template }`: the template record', schema: object({ template: TEMPLATE_RECORD }) },
    errors: [409],
    async handler({ params, body, ...sc }) {
      const service = new TemplateService(sc);
      const [template] = await service.views([templateFields(await service.create(params.projectId, body))]);
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
      schema: {
        type: 'object',
        required: ['templates'],
        properties: {
          templates: {
            type: 'array',
            items: object({ id: uuid, name: { type: 'string' }, is_slice: { type: 'boolean' }, slice: { type: ['string', 'null'] }, trade: TRADE, documents }),
          },
          ...paging,
        },
      },
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
    success: { status: 200, description: '`{ template: { id, name, documents } }`', schema: object({ template: object({ id: uuid, name: { type: 'string' }, documents }) }) },
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
    success: { status: 201, description: '`{ documents }` of the invited contractors (200 when none was new)', schema: object({ documents }) },
    errors: [409],
    async handler({ params, body, ...sc }) {
      const result = await new InvitationService(sc).invite(params.projectId, params.templateId, body);
      return { status: result.created > 0 ? 201 : 200, body: { documents: restDocuments(result.documents) } };
    },
  }),
  route({
    operation: 16, operationId: 'downloadDocument', method: 'get', prefix: 'svc',
    path: '/projects/:projectId/templates/:templateId/documents/:documentId/download{/:version}', alias: true, tag,
    summary: 'Without a version: the document\'s versions and their files. With one: a signed URL per file of that version, valid 15 minutes, served by the service at /files/{fileId}.',
    params: DocumentDownloadParams,
    success: {
      status: 200,
      description: '`{ versions: [{ version, status, sent_at, files: [{ name, size }] }] }`, or with a version `{ files: [{ name, url, expires_at }] }`',
      schema: {
        oneOf: [
          object({ versions: { type: 'array', items: object({ version: integer, status: { type: 'string' }, sent_at: nullableTimestamp, files: { type: 'array', items: object({ name: { type: 'string' }, size: integer }) } }) } }),
          object({ files: { type: 'array', items: object({ name: { type: 'string' }, url: { type: 'string', format: 'uri' }, expires_at: timestamp }) } }),
        ],
      },
    },
    async handler({ params, ...sc }) {
      const service = new DocumentService(sc);
      if (params.version === undefined) {
        return { body: { versions: toRest(await service.versionFiles(params.projectId, params.templateId, params.documentId)) } };
      }
      return { body: { files: toRest(await service.versionDownload(params.projectId, params.templateId, params.documentId, params.version)) } };
    },
  }),
];
