import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root, UseMiddleware } from 'type-graphql';
import type { DocumentFields, DocumentView } from '../documents/document.service';
import { AddTemplateInput } from './template.input';
import type { ProjectView } from '../projects/project.service';
import { TemplateService, type TemplateFields } from './template.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { Contractor } from '../contractors/contractor.output';
import { Document, DocumentVersion } from '../documents/document.output';
import { AddTemplatePayload, DeleteTemplatePayload } from './template.payloads';
import { Project } from '../projects/project.output';
import { ProjectTrade } from '../trades/project-trade.output';
import { TemplateStats } from '../statistics/statistics.output';
import { Template } from './template.output';
import { mapNow } from '../../platform/graphql/dataloaders';

/** A document as a resolver meets it: from a loader (ids only) or from a service view (embedded contractor). */
type DocumentRoot = Partial<DocumentFields> & Partial<Pick<DocumentView, 'contractor'>> & { id: string };

@Resolver(() => Project)
export class ProjectTemplatesFieldResolver {
  @FieldResolver(() => [Template], { description: 'Templates and slices of the project' })
  templates(@Root() project: Pick<ProjectView, 'id'>, @Ctx() { loaders }: GraphQLContext) {
    return loaders.templates.load(project.id);
  }
}

/** A template's relations (no arguments: nothing for uuidArguments to check, on hundreds of templates). */
@Resolver(() => Template)
export class TemplateFieldsResolver {
  // Without a promise once the level above has answered (loadNow): a dashboard resolves these for hundreds of templates.
  @FieldResolver(() => ProjectTrade, { description: 'The project\'s trade the template consults on' })
  trade(@Root() template: TemplateFields, @Ctx() { loaders }: GraphQLContext) {
    return mapNow(loaders.trades.loadNow(template.projectId), (trades) => {
      const trade = trades.find((t) => t.id === template.trade.id);
      // A template's trade cannot be deleted while the template exists (foreign key), nor be of another project.
      if (!trade) throw new Error(`trade ${template.trade.id} of template ${template.id} is not among its project's trades`);
      return trade;
    });
  }

  @FieldResolver(() => TemplateStats)
  stats(@Root() template: TemplateFields, @Ctx() { loaders }: GraphQLContext) {
    return mapNow(loaders.templateStats.loadNow(template.id), (stats) => stats && { id: `${template.id}:stats`, templateId: template.id, ...stats });
  }

  @FieldResolver(() => [Document], { description: 'The invited contractors\' documents' })
  documents(@Root() template: TemplateFields, @Ctx() { loaders }: GraphQLContext) {
    return loaders.documents.loadNow(template.id);
  }

  @FieldResolver(() => [Template], { description: 'The slices of a main template (empty for a slice)' })
  slices(@Root() template: TemplateFields, @Ctx() { loaders }: GraphQLContext) {
    if (template.isSlice) return [];
    return mapNow(loaders.templates.loadNow(template.projectId), (all) => all.filter((t) => t.isSlice && t.trade.id === template.trade.id));
  }
}

@UseMiddleware(uuidArguments)
@Resolver(() => Template)
export class TemplateResolver {
  @Mutation(() => AddTemplatePayload, { description: 'Adds the trade\'s template, or a slice of it when it has one' })
  async addTemplate(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('input', () => AddTemplateInput) input: AddTemplateInput,
    @Ctx() { sc }: GraphQLContext,
  ) {
    const service = new TemplateService(sc);
    const template = await service.create(projectId, input);
    return { template: await service.get(template.project.id, template.id), projectId: template.project.id, parentTemplateId: template.parent?.id ?? null };
  }

  @Mutation(() => DeleteTemplatePayload, { description: 'Deletes a template with its slices, or one slice; CONFLICT when it holds answers' })
  async deleteTemplate(@Arg('projectId', () => ID) projectId: string, @Arg('templateId', () => ID) templateId: string, @Ctx() { sc }: GraphQLContext) {
    const removed = await new TemplateService(sc).remove(projectId, templateId);
    return { deletedTemplateIds: removed.templateIds, projectId: removed.projectId, parentTemplateId: removed.parentTemplateId };
  }
}

@Resolver(() => Document)
export class DocumentResolver {
  @FieldResolver(() => Contractor)
  contractor(@Root() doc: DocumentRoot, @Ctx() { loaders }: GraphQLContext) {
    // Always the directory entry: a service view's embedded contractor has only some of its fields.
    return loaders.contractor.loadNow(doc.contractorId ?? doc.contractor!.id);
  }

  @FieldResolver(() => [DocumentVersion], { description: 'The contractor\'s priced answers, by version' })
  versions(@Root() doc: DocumentRoot, @Ctx() { loaders }: GraphQLContext) {
    // Always through the loader: a service view's versions carry no row id.
    return loaders.versions.loadNow(doc.id);
  }
}
