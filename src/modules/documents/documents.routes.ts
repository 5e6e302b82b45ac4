import { DocumentService } from './document.service';
import { DocumentParams, DocumentVersionParams } from '../../platform/rest/params';
import { FileDownload, VersionFiles } from './document.output';
import { keyedList, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

const tag = 'Templates';

/** Operation #16 (a contractor's answers and their files), also served under /svc/v1. */
export const documentRoutes: RouteDef[] = [
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
