import { InvitationService } from './invitation.service';
import { InviteContractorsInput } from './invitation.input';
import { TemplateParams } from '../../platform/rest/params';
import { Document } from '../documents/document.output';
import { restDocuments } from '../documents/document.presenter';
import { keyedList, route, type RouteDef } from '../../platform/rest/route';

const tag = 'Templates';

/** Operation #15, also served under /svc/v1. */
export const invitationRoutes: RouteDef[] = [
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
];
