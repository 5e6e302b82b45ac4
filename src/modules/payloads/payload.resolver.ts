import { Ctx, FieldResolver, Resolver, Root, type ClassType } from 'type-graphql';
import { OrganizationService } from '../organizations/organization.service';
import type { GraphQLContext } from '../context';
import { templateOf } from '../loaders';
import { User } from '../organizations/organization.output';
import {
  AddTemplatePayload, CreateProjectTradePayload, DeleteProjectTradePayload, DeleteTemplatePayload, InviteContractorsPayload,
  SwitchOrganizationPayload, UpdateProjectTradePayload, type ProjectPayloadRoot,
} from './payloads.type';
import { Project } from '../projects/project.output';
import { Template } from '../templates/template.output';

// The relations of mutation payloads, read after the write through the request's loaders (cleared after each
// mutation: loaders.ts), so that a payload answers the records as they now are, in as many statements as a query.

/** `project` of a payload whose root names it by id. */
function payloadProject(payload: ClassType<ProjectPayloadRoot>) {
  @Resolver(() => payload)
  class PayloadProjectResolver {
    @FieldResolver(() => Project, { description: 'The project as the mutation left it' })
    project(@Root() root: ProjectPayloadRoot, @Ctx() { loaders }: GraphQLContext) {
      return loaders.project.load(root.projectId);
    }
  }
  return PayloadProjectResolver;
}

/** `parentTemplate` of a payload: the main template whose `slices` changed; null when no slice was added or removed. */
function payloadParentTemplate(payload: ClassType<ProjectPayloadRoot & { parentTemplateId: string | null }>) {
  @Resolver(() => payload)
  class PayloadParentTemplateResolver {
    @FieldResolver(() => Template, { nullable: true, description: 'The main template whose `slices` changed; null unless a slice was added or removed' })
    parentTemplate(@Root() root: ProjectPayloadRoot & { parentTemplateId: string | null }, @Ctx() { loaders }: GraphQLContext) {
      return root.parentTemplateId ? templateOf(loaders, root.projectId, root.parentTemplateId) : null;
    }
  }
  return PayloadParentTemplateResolver;
}

@Resolver(() => InviteContractorsPayload)
export class InviteContractorsPayloadResolver {
  @FieldResolver(() => Template, { description: 'The template, with its documents' })
  template(@Root() root: InviteContractorsPayload, @Ctx() { loaders }: GraphQLContext) {
    return templateOf(loaders, root.projectId, root.templateId);
  }
}

@Resolver(() => SwitchOrganizationPayload)
export class SwitchOrganizationPayloadResolver {
  @FieldResolver(() => User, { description: 'The caller, whose `currentOrganization` is now `organization`' })
  me(@Ctx() { sc }: GraphQLContext) {
    return new OrganizationService(sc).callerView();
  }
}

export const PAYLOAD_RESOLVERS = [
  payloadProject(CreateProjectTradePayload), payloadProject(UpdateProjectTradePayload), payloadProject(DeleteProjectTradePayload),
  payloadProject(AddTemplatePayload), payloadProject(DeleteTemplatePayload), payloadProject(InviteContractorsPayload),
  payloadParentTemplate(AddTemplatePayload), payloadParentTemplate(DeleteTemplatePayload),
  InviteContractorsPayloadResolver, SwitchOrganizationPayloadResolver,
] as const;
