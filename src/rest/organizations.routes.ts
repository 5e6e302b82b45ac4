import { OrganizationParams, UserParams } from '../services/inputs/params';
import { SwitchOrganizationInput } from '../services/inputs/organization.input';
import { OrganizationService } from '../services/organization.service';
import { route, type JsonSchema, type RouteDef } from './route';
import { toRest } from './serialize';

const tag = 'Organizations';

const ORGANIZATION: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    information: { type: 'object', properties: { fiscal_number: { type: ['string', 'null'] } } },
    addresses: { type: 'array', items: { type: 'object', properties: { number: { type: 'string' }, address: { type: 'string' }, zip_code: { type: 'string' }, city: { type: 'string' }, country: { type: 'string' } } } },
    users: { type: 'array', items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, first_name: { type: 'string' }, last_name: { type: 'string' }, phone: { type: 'string' }, mobile: { type: ['string', 'null'] }, email: { type: 'string' }, is_registered: { type: 'boolean' } } } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const USER: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' }, first_name: { type: 'string' }, last_name: { type: 'string' }, phone: { type: 'string' },
    mobile: { type: ['string', 'null'] }, email: { type: 'string' }, is_registered: { type: 'boolean' },
    organization_ids: { type: 'array', items: { type: 'string', format: 'uuid' }, description: 'The caller\'s organizations the user belongs to' },
  },
};

const HEADQUARTER: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    organizations: { type: 'array', items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' } } } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** Operations #17-#21. */
export const organizationRoutes: RouteDef[] = [
  route({
    operation: 17, operationId: 'listOrganizations', method: 'get', prefix: 'svc', path: '/organizations', alias: true, tag,
    summary: 'Architect organizations where the caller is Administrator.',
    success: { status: 200, description: '`{ organizations }`', schema: { type: 'object', properties: { organizations: { type: 'array', items: ORGANIZATION } } } },
    async handler(sc) {
      return { body: { organizations: toRest(await new OrganizationService(sc).list()) } };
    },
  }),
  route({
    operation: 18, operationId: 'getOrganizationUser', method: 'get', prefix: 'svc', path: '/organizations/users/:userId', alias: true, tag,
    summary: 'A user of one of the caller\'s organizations.',
    params: UserParams,
    success: { status: 200, description: '`{ user }`', schema: { type: 'object', properties: { user: USER } } },
    async handler({ params, ...sc }) {
      return { body: { user: toRest(await new OrganizationService(sc).user(params.userId)) } };
    },
  }),
  route({
    operation: 19, operationId: 'switchOrganization', method: 'post', prefix: 'svc', path: '/organizations/switch', alias: true, tag,
    summary: 'Sets the caller\'s current organization.',
    body: SwitchOrganizationInput,
    success: { status: 200, description: '`{ organization }`', schema: { type: 'object', properties: { organization: ORGANIZATION } } },
    async handler({ body, ...sc }) {
      return { body: { organization: toRest(await new OrganizationService(sc).switch(body.organizationId)) } };
    },
  }),
  route({
    operation: 21, operationId: 'getOrganizationHeadquarter', method: 'get', prefix: 'svc', path: '/organizations/headquarters/:organizationId', alias: true, tag,
    summary: 'The headquarter an organization of the caller belongs to.',
    params: OrganizationParams,
    success: { status: 200, description: '`{ headquarter }`', schema: { type: 'object', properties: { headquarter: HEADQUARTER } } },
    async handler({ params, ...sc }) {
      return { body: { headquarter: toRest(await new OrganizationService(sc).headquarterOf(params.organizationId)) } };
    },
  }),
  route({
    operation: 20, operationId: 'getOrganization', method: 'get', prefix: 'svc', path: '/organizations/:organizationId', alias: true, tag,
    summary: 'One organization where the caller is Administrator.',
    params: OrganizationParams,
    success: { status: 200, description: '`{ organization }`', schema: { type: 'object', properties: { organization: ORGANIZATION } } },
    async handler({ params, ...sc }) {
      return { body: { organization: toRest(await new OrganizationService(sc).get(params.organizationId)) } };
    },
  }),
];
