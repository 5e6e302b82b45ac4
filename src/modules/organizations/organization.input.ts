import { Required, Uuid } from '../../platform/validation/rules';

/** Body of POST organizations/switch. */
export class SwitchOrganizationInput {
  @Required() @Uuid()
  organizationId!: string;
}
