import { Required, Uuid } from './rules';

/** Body of POST organizations/switch. */
export class SwitchOrganizationInput {
  @Required() @Uuid()
  organizationId!: string;
}
