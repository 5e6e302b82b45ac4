import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Document } from '../documents/document.output';
import { Organization } from '../organizations/organization.output';
import { Project, ProjectTrade } from '../projects/project.output';
import { Template } from '../templates/template.output';

// Mutation payloads (Relay style): each returns the records the mutation changed and the parents whose lists
// it changed, so that a normalized cache holds what the server holds without a refetch. `project` fields,
// `parentTemplate`, `template` of an invitation and `me` resolve through the request's loaders, after the write
// (payload-resolvers.ts).

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

@ObjectType({ description: '`project.trades` lists the new trade', simpleResolvers: true })
export class CreateProjectTradePayload implements ProjectPayloadRoot {
  @Field(() => ProjectTrade, { description: 'The new trade' }) trade!: ProjectTrade;
  projectId!: string;
}

@ObjectType({ description: 'Templates show the trade by reference: `trade` updates them all. `project.trades` is ordered by number, which may have changed', simpleResolvers: true })
export class UpdateProjectTradePayload implements ProjectPayloadRoot {
  @Field(() => ProjectTrade, { description: 'The trade as changed' }) trade!: ProjectTrade;
  projectId!: string;
}

@ObjectType({ description: '`project.trades` no longer lists the trade', simpleResolvers: true })
export class DeleteProjectTradePayload implements ProjectPayloadRoot {
  @Field(() => ID) deletedTradeId!: string;
  projectId!: string;
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

@ObjectType({ description: '`template.documents` lists the invited contractors; `template.stats` and `project.statistics` count them', simpleResolvers: true })
export class InviteContractorsPayload implements ProjectPayloadRoot {
  @Field(() => Int, { description: 'Documents created by this request; each consumed one credit' }) created!: number;
  @Field(() => [Document], { description: 'The documents of the invited contractors, in the order sent' }) documents!: Document[];
  projectId!: string;
  templateId!: string;
}

@ObjectType({ simpleResolvers: true })
export class SwitchOrganizationPayload {
  @Field(() => Organization, { description: 'The caller\'s current organization now' }) organization!: Organization;
}
