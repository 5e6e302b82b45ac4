import { CompanyService } from './company.service';
import { CompanySiretParams } from '../tools/tools.input';
import { ref } from '../../platform/outputs/output';
import { CompanyContacts, CompanyTrades } from './company.output';
import { route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

const tag = 'Companies';

/** The 404 of #33 and #34 (interface.md, Errors): an OpenAPI component of its own. */
export const COMPANY_SCHEMAS = {
  SiretNotFound: {
    type: 'object',
    required: ['code', 'message', 'siret', 'data'],
    properties: {
      code: { type: 'integer', examples: [404] },
      message: { type: 'string', examples: ['No contractor organization has this SIRET'] },
      siret: { type: 'string', examples: ['12345678901234'] },
      data: { type: 'array', maxItems: 0, items: {} },
    },
  },
};

const errorBodies = { 404: { description: 'No contractor organization has this SIRET (interface.md, Errors)', schema: { $ref: '#/components/schemas/SiretNotFound' } } };

// The SIRET comes from the path; a body sent with the GET is not read (decisions.md section 4).

/** Operations #33-#34. */
export const companyRoutes: RouteDef[] = [
  route({
    operation: 33, operationId: 'companyContacts', method: 'get', prefix: 'internal', path: '/company/contacts/:siret', tag,
    summary: 'Users of every contractor organization with that SIRET, as contacts. 400 when the SIRET is not 14 digits; 404 `{ code, message, siret, data: [] }` when no contractor organization has it.',
    params: CompanySiretParams,
    success: { status: 200, description: '`{ siret, companies }`', schema: ref(CompanyContacts) },
    errorBodies,
    async handler({ params, ...sc }) {
      return { body: toRest(await new CompanyService(sc).contacts(params.siret)) };
    },
  }),
  route({
    operation: 34, operationId: 'companyTrades', method: 'get', prefix: 'internal', path: '/company/trades/:siret', tag,
    summary: 'Business sectors of every contractor organization with that SIRET, and the trades it was consulted on in the caller\'s projects. 400 when the SIRET is not 14 digits; 404 `{ code, message, siret, data: [] }` when none has it.',
    params: CompanySiretParams,
    success: {
      status: 200, description: '`{ siret, companies }`',
      schema: ref(CompanyTrades),
    },
    errorBodies,
    async handler({ params, ...sc }) {
      return { body: toRest(await new CompanyService(sc).trades(params.siret)) };
    },
  }),
];
