import { Ctx, Field, FieldResolver, ID, ObjectType, Resolver, Root, type ClassType } from 'type-graphql';
import type { GraphQLContext } from '../context';
import type { Loaders } from '../loaders';
import type { TemplateFields } from './template.service';
import { payloadProject, type ProjectPayloadRoot } from '../projects/project.payloads';
import { Template } from './template.output';

/**
 * A template of a project, through the project's templates (the loader of `Project.templates`); null when gone. Here,
 * with the payloads that resolve a template, for the other modules whose payloads and events name one.
 */
export async function templateOf(loaders: Loaders, projectId: string, templateId: string): Promise<TemplateFields | null> {
  return (await loaders.templates.load(projectId)).find((t) => t.id === templateId) ?? null;
}

@ObjectType({ description: '`project.templates` lists the new template; `parentTemplate.slices` the new slice', simpleResolvers: true })
export class AddTemplatePayload implements ProjectPayloadRoot {
  @Field(() => Template, { description: 'The new template or slice' }) template!: Template;
  projectId!: string;
  parentTemplateId!: string | null;
}

@ObjectType({ description: '`project.templates` and `parentTemplate.slices` no longer list what went', simpleResolvers: true })
export class DeleteTemplatePayload implements ProjectPayloadRoot {
  @Field(() => [ID], { description: 'The template, then its slices that went with it' }) deletedTemplateIds!: string[];
  projectId!: string;
  parentTemplateId!: string | null;
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

export const TEMPLATE_PAYLOAD_RESOLVERS = [
  payloadProject(AddTemplatePayload), payloadProject(DeleteTemplatePayload),
  payloadParentTemplate(AddTemplatePayload), payloadParentTemplate(DeleteTemplatePayload),
] as const;
