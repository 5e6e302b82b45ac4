import { Arg, Ctx, Field, FieldResolver, ID, Int, Mutation, ObjectType, Resolver, Root, UseMiddleware } from 'type-graphql';
import type { ContractorView, DocumentFields, DocumentView } from '../../services/document.service';
import { ContractorInvitationInput, InviteContractorsInput } from '../../services/inputs/invitation.input';
import { AddTemplateInput } from '../../services/inputs/template.input';
import { InvitationService } from '../../services/invitation.service';
import type { ProjectView } from '../../services/project.service';
import { TemplateService, templateFields, type TemplateFields } from '../../services/template.service';
import { validateInstance } from '../../services/validation';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../uuid-args';
import { Contractor, Document, DocumentVersion } from '../types/document.type';
import { Project } from '../types/project.type';
import { TemplateStats } from '../types/statistics.type';
import { Template } from '../types/template.type';

/** A document as a resolver meets it: from a loader (ids only) or from a service view (embedded). */
type DocumentRoot = Partial<DocumentFields> & Partial<Pick<DocumentView, 'contractor' | 'versions'>> & { id: string };

@ObjectType()
class InvitationResult {
  @Field(() => Int, { description: 'Documents created by this request; each consumed one credit' }) created!: number;
  @Field(() => [Document], { description: 'The documents of the invited contractors, in the order sent' }) documents!: DocumentRoot[];
}

@Resolver(() => Project)
export class ProjectTemplatesFieldResolver {
  @FieldResolver(() => [Template], { description: 'Templates and slices of the project' })
  templates(@Root() project: Pick<ProjectView, 'id'>, @Ctx() { loaders }: GraphQLContext) {
    return loaders.templates.load(project.id);
  }
}

@UseMiddleware(uuidArguments)
@Resolver(() => Template)
export class TemplateResolver {
  @FieldResolver(() => TemplateStats)
  stats(@Root() template: TemplateFields, @Ctx() { loaders }: GraphQLContext) {
    return loaders.templateStats.load(template.id);
  }

  @FieldResolver(() => [Document], { description: 'The invited contractors\' documents' })
  documents(@Root() template: TemplateFields, @Ctx() { loaders }: GraphQLContext) {
    return loaders.documents.load(template.id);
  }

  @FieldResolver(() => [Template], { description: 'The slices of a main template (empty for a slice)' })
  async slices(@Root() template: TemplateFields, @Ctx() { loaders }: GraphQLContext) {
    if (template.isSlice) return [];
    const all = await loaders.templates.load(template.projectId);
    return all.filter((t) => t.isSlice && t.trade.id === template.trade.id);
  }

  @Mutation(() => Template, { description: 'Adds the trade\'s template, or a slice of it when it has one' })
  async addTemplate(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('input', () => AddTemplateInput) input: AddTemplateInput,
    @Ctx() { sc }: GraphQLContext,
  ) {
    return templateFields(await new TemplateService(sc).create(projectId, input));
  }

  @Mutation(() => Boolean, { description: 'Deletes a template with its slices, or one slice; CONFLICT when it holds answers' })
  async deleteTemplate(@Arg('projectId', () => ID) projectId: string, @Arg('templateId', () => ID) templateId: string, @Ctx() { sc }: GraphQLContext) {
    await new TemplateService(sc).remove(projectId, templateId);
    return true;
  }

  @Mutation(() => InvitationResult, { description: 'Invites contractors to a template; a repeated email creates nothing' })
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

@Resolver(() => Document)
export class DocumentResolver {
  @FieldResolver(() => Contractor)
  contractor(@Root() doc: DocumentRoot, @Ctx() { loaders }: GraphQLContext): Promise<ContractorView | null> {
    // Always the directory entry: a service view's embedded contractor lacks `phone`.
    return loaders.contractor.load(doc.contractorId ?? doc.contractor!.id);
  }

  @FieldResolver(() => [DocumentVersion], { description: 'The contractor\'s priced answers, by version' })
  versions(@Root() doc: DocumentRoot, @Ctx() { loaders }: GraphQLContext) {
    return doc.versions ?? loaders.versions.load(doc.id);
  }
}
