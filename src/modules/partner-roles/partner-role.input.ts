import { Optional, Text } from '../../platform/validation/rules';

/** Optional body of POST pf/{userId}/roles: the code of the role to assign instead of the standard one. */
export class AssignPartnerRoleInput {
  @Optional() @Text(64)
  role?: string | null;
}
