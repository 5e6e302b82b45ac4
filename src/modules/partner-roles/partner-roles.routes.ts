import { UserParams } from '../../platform/rest/params';
import { AssignPartnerRoleInput } from './partner-role.input';
import { PartnerRoleService } from './partner-role.service';
import { PartnerRole } from './partner-role.output';
import { keyedList, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

const tag = 'Partner roles';
const path = '/pf/:userId/roles';

const ROLES = keyedList('roles', PartnerRole);

/** Operations #26-#28. */
export const partnerRoleRoutes: RouteDef[] = [
  route({
    operation: 26, operationId: 'listPartnerRoles', method: 'get', prefix: 'svc', path, tag,
    summary: 'Partner-platform roles currently authorized for a user of the caller\'s organizations.',
    params: UserParams,
    success: { status: 200, description: '`{ roles }`', schema: ROLES },
    async handler({ params, ...sc }) {
      return { body: { roles: toRest(await new PartnerRoleService(sc).list(params.userId)) } };
    },
  }),
  route({
    operation: 27, operationId: 'assignPartnerRole', method: 'post', prefix: 'svc', path, tag,
    summary: 'Assigns the standard partner role, or the role named by `role`; 200 when the user already held it.',
    params: UserParams,
    body: AssignPartnerRoleInput, bodyOptional: true,
    success: { status: 201, description: '`{ roles }`: every role the user now holds; the role was given', schema: ROLES, also: { status: 200, description: '`{ roles }`: the user already held the role; nothing changed' } },
    async handler({ params, body, ...sc }) {
      const { assigned, roles } = await new PartnerRoleService(sc).assign(params.userId, body.role);
      return { status: assigned ? 201 : 200, body: { roles: toRest(roles) } };
    },
  }),
  route({
    operation: 28, operationId: 'removePartnerRoles', method: 'delete', prefix: 'svc', path, tag,
    summary: 'Removes every partner role of the user.',
    params: UserParams,
    success: { status: 204, description: 'No content' },
    async handler({ params, ...sc }) {
      await new PartnerRoleService(sc).removeAll(params.userId);
      return { status: 204, body: null };
    },
  }),
];
