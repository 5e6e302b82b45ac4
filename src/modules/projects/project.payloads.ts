import { Ctx, Field, FieldResolver, ObjectType, Resolver, Root, type ClassType } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { Project } from './project.output';

// Mutation payloads (Relay style): each returns the records the mutation changed and the parents whose lists it
// changed, so that a normalized cache holds what the server holds without a refetch. Each domain declares its
// payloads beside its resolver; their relations (`project` here) resolve through the request's loaders after the
// write (cleared after each mutation: platform/graphql/dataloaders.ts), so that a payload answers the records as
// they now are, in as many statements as a query.

/** Roots of the payloads whose `project` resolves by id. */
export interface ProjectPayloadRoot {
  projectId: string;
}

@ObjectType({ simpleResolvers: true })
export class CreateProjectPayload {
  @Field(() => Project, { description: 'The new project' }) project!: Project;
}

@ObjectType({ simpleResolvers: true })
export class ArchiveProjectPayload {
  @Field(() => Project, { description: 'The project, archived' }) project!: Project;
}

/** `project` of a payload whose root names it by id (payloads of trades, templates and invitations). */
export function payloadProject(payload: ClassType<ProjectPayloadRoot>) {
  @Resolver(() => payload)
  class PayloadProjectResolver {
    @FieldResolver(() => Project, { description: 'The project as the mutation left it' })
    project(@Root() root: ProjectPayloadRoot, @Ctx() { loaders }: GraphQLContext) {
      return loaders.project.load(root.projectId);
    }
  }
  return PayloadProjectResolver;
}
