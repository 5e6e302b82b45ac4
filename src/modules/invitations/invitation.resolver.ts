import { Arg, Ctx, Field, FieldResolver, ID, Int, Mutation, ObjectType, Resolver, Root, UseMiddleware } from 'type-graphql';
import { ContractorInvitationInput, InviteContractorsInput } from './invitation.input';
import { InvitationService } from './invitation.service';
import { validateInstance } from '../../platform/validation/validation';
import type { GraphQLContext } from '../context';
import { templateOf } from '../templates/template.payloads';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { Document } from '../documents/document.output';
import { payloadProject, type ProjectPayloadRoot } from '../projects/project.payloads';
import { Template } from '../templates/template.output';

@ObjectType({ description: '`template.documents` lists the invited contractors; `template.stats` and `project.statistics` count them', simpleResolvers: true })
class InviteContractorsPayload implements ProjectPayloadRoot {
  @Field(() => Int, { description: 'Documents created by this request; each consumed one credit' }) created!: number;
  @Field(() => [Document], { description: 'The documents of the invited contractors, in the order sent' }) documents!: Document[];
  projectId!: string;
  templateId!: string;
}

@UseMiddleware(uuidArguments)
@Resolver(() => Template)
class InvitationResolver {
  @Mutation(() => InviteContractorsPayload, { description: 'Invites contractors to a template; a repeated email creates nothing' })
  async inviteContractors(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('templateId', () => ID) templateId: string,
    // Validated below as the whole input, so a failing field is named by its path (`contractors.0.email`).
    @Arg('contractors', () => [ContractorInvitationInput], { validateFn: () => undefined }) contractors: ContractorInvitationInput[],
    @Ctx() { sc }: GraphQLContext,
  ) {
    const input = Object.assign(new InviteContractorsInput(), { contractors });
    await validateInstance(input);
    return new InvitationService(sc).invite(projectId, templateId, input);
  }
}

@Resolver(() => InviteContractorsPayload)
class InviteContractorsPayloadResolver {
  @FieldResolver(() => Template, { description: 'The template, with its documents' })
  template(@Root() root: InviteContractorsPayload, @Ctx() { loaders }: GraphQLContext) {
    return templateOf(loaders, root.projectId, root.templateId);
  }
}

export const INVITATION_RESOLVERS = [InvitationResolver, InviteContractorsPayloadResolver, payloadProject(InviteContractorsPayload)] as const;
