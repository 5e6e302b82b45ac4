import { CompanyService } from '../services/company.service';
import { CompanySiretParams } from '../services/inputs/tools.input';
import { route, type JsonSchema, type RouteDef } from './route';
import { toRest } from './serialize';

const tag = 'Companies';

const lookup = (company: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: {
    siret: { type: 'string' },
    companies: { type: 'array', items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' }, ...company } } },
  },
});

const CONTACT: JsonSchema = {
  type: 'object',
  properties: {
    first_name: { type: 'string' }, last_name: { type: 'string' }, email: { type: 'string' }, phone: { type: 'string' }, mobile: { type: ['string', 'null'] },
  },
};

// The SIRET comes from the path; a body sent with the GET is not read (decisions.md section 4).

/** Operations #33-#34. */
export const companyRoutes: RouteDef[] = [
  route({
    operation: 33, operationId: 'companyContacts', method: 'get', prefix: 'internal', path: '/company/contacts/:siret', tag,
    summary: 'Users of every contractor organization with that SIRET, as contacts. 400 when the SIRET is not 14 digits; 404 `{ code, message, siret, data: [] }` when no contractor organization has it.',
    params: CompanySiretParams,
    success: { status: 200, description: '`{ siret, companies }`', schema: lookup({ contacts: { type: 'array', items: CONTACT } }) },
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
      schema: lookup({
        business_sectors: { type: 'array', items: { type: 'string' } },
        trades: { type: 'array', items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' } } } },
      }),
    },
    async handler({ params, ...sc }) {
      return { body: toRest(await new CompanyService(sc).trades(params.siret)) };
    },
  }),
];
