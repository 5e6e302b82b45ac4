import { ContractorService } from './contractor.service';
import { ContractorParams } from '../../platform/rest/params';
import { Contractor } from './contractor.output';
import { keyed, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

/** Operations #22. */
export const contractorRoutes: RouteDef[] = [
  route({
    operation: 22, operationId: 'getContractor', method: 'get', prefix: 'svc', path: '/contractors/:contractorId', tag: 'Contractors',
    summary: 'A contractor of the current organization\'s directory.',
    params: ContractorParams,
    success: { status: 200, description: '`{ contractor }`', schema: keyed('contractor', Contractor) },
    async handler({ params, ...sc }) {
      return { body: { contractor: toRest(await new ContractorService(sc).get(params.contractorId)) } };
    },
  }),
];
