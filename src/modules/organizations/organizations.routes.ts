import { OrganizationParams, UserParams } from '../../platform/rest/params';
import { SwitchOrganizationInput } from './organization.input';
import { OrganizationService } from './organization.service';
import { Headquarter, Organization, OrganizationUser } from './organization.output';
import { keyed, keyedList, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

const tag = 'Organizations';

/** Operations #17-#21. */
export const organizationRoutes: RouteDef[] = [
  route({
    operation: 17, operationId: 'listOrganizations', method: 'get', prefix: 'svc', path: '/organizations', alias: true, tag,
    summary: 'Architect organizations where the caller is Administrator.',
    success: { status: 200, description: '`{ organizations }`', schema: keyedList('organizations', Organization) },
    async handler(sc) {
      return { body: { organizations: toRest(await new OrganizationService(sc).list()) } };
    },
  }),
  route({
    operation: 18, operationId: 'getOrganizationUser', method: 'get', prefix: 'svc', path: '/organizations/users/:userId', alias: true, tag,
    summary: 'A user of one of the caller\'s organizations.',
    params: UserParams,
    success: { status: 200, description: '`{ user }`', schema: keyed('user', OrganizationUser) },
    async handler({ params, ...sc }) {
      return { body: { user: toRest(await new OrganizationService(sc).user(params.userId)) } };
    },
  }),
  route({
    operation: 19, operationId: 'switchOrganization', method: 'post', prefix: 'svc', path: '/organizations/switch', alias: true, tag,
    summary: 'Sets the caller\'s current organization.',
    body: SwitchOrganizationInput,
    success: { status: 200, description: '`{ organization }`', schema: keyed('organization', Organization) },
    async handler({ body, ...sc }) {
      return { body: { organization: toRest(await new OrganizationService(sc).switch(body.organizationId)) } };
    },
  }),
  route({
    operation: 21, operationId: 'getOrganizationHeadquarter', method: 'get', prefix: 'svc', path: '/organizations/headquarters/:organizationId', alias: true, tag,
    summary: 'The headquarter an organization of the caller belongs to.',
    params: OrganizationParams,
    success: { status: 200, description: '`{ headquarter }`', schema: keyed('headquarter', Headquarter) },
    async handler({ params, ...sc }) {
      return { body: { headquarter: toRest(await new OrganizationService(sc).headquarterOf(params.organizationId)) } };
    },
  }),
  route({
    operation: 20, operationId: 'getOrganization', method: 'get', prefix: 'svc', path: '/organizations/:organizationId', alias: true, tag,
    summary: 'One organization where the caller is Administrator.',
    params: OrganizationParams,
    success: { status: 200, description: '`{ organization }`', schema: keyed('organization', Organization) },
    async handler({ params, ...sc }) {
      return { body: { organization: toRest(await new OrganizationService(sc).get(params.organizationId)) } };
    },
  }),
];
