import { ContractorService } from '../services/contractor.service';
import { ContractorParams } from '../services/inputs/params';
import { route, type JsonSchema, type RouteDef } from './route';
import { toRest } from './serialize';

const CONTRACTOR: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'email', 'phone', 'information', 'company_id', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    email: { type: 'string' },
    phone: { type: ['string', 'null'] },
    information: { type: 'object', properties: { fiscal_number: { type: ['string', 'null'] } } },
    company_id: { type: ['string', 'null'], format: 'uuid', description: 'The contractor company this entry is linked to' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** Operations #22. */
export const contractorRoutes: RouteDef[] = [
  route({
    operation: 22, operationId: 'getContractor', method: 'get', prefix: 'svc', path: '/contractors/:contractorId', tag: 'Contractors',
    summary: 'A contractor of the current organization\'s directory.',
    params: ContractorParams,
    success: { status: 200, description: '`{ contractor }`', schema: { type: 'object', properties: { contractor: CONTRACTOR } } },
    async handler({ params, ...sc }) {
      return { body: { contractor: toRest(await new ContractorService(sc).get(params.contractorId)) } };
    },
  }),
];
