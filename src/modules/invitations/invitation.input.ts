import { ArrayMaxSize } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { Email, List, Nested, Optional, Required, Text } from '../../platform/validation/rules';

/** Most contractors one invitation request may carry. */
const MAX_INVITATIONS = 200;

/** One item of the contractor invitation input of interface.md. */
@InputType('ContractorInvitationInput')
export class ContractorInvitationInput {
  @Field(() => String)
  @Required() @Text()
  name!: string;

  @Field(() => String, { description: 'Identifies the contractor in the organization\'s directory (case-insensitive)' })
  @Required() @Text() @Email()
  email!: string;

  @Field(() => String, { nullable: true })
  @Optional() @Text(50)
  phone?: string | null;
}

/** Body of POST .../templates/{templateId}/contractors. */
@InputType('InviteContractorsInput')
export class InviteContractorsInput {
  @Field(() => [ContractorInvitationInput])
  @Required() @List(1) @ArrayMaxSize(MAX_INVITATIONS, { message: `must have at most ${MAX_INVITATIONS} items` })
  @Nested(() => ContractorInvitationInput, { each: true })
  contractors!: ContractorInvitationInput[];
}
