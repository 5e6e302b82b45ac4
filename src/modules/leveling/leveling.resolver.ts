import { Args, Ctx, FieldResolver, ID, Resolver, Root } from 'type-graphql';
import { LevelingArgs, levelingThreshold } from './leveling.input';
import { LevelingColumn, LevelingEntry, ProjectLeveling, TemplateLeveling } from './leveling.output';
import type { TemplateFields } from '../templates/template.service';
import type { GraphQLContext } from '../context';
import { Contractor } from '../contractors/contractor.output';
import { Project } from '../projects/project.output';
import { Template } from '../templates/template.output';

/**
 * A leveling is an object a client caches, and its flags depend on the threshold: its id names both, so that
 * answers for two thresholds never overwrite each other in a normalized cache.
 */
const levelingId = (recordId: string, threshold: number) => `${recordId}:leveling:${threshold}`;

@Resolver(() => Template)
class TemplateLevelingFieldResolver {
  @FieldResolver(() => TemplateLeveling, { description: 'Bid leveling of the lot: its offers side by side (docs/leveling.md)' })
  async leveling(@Root() template: TemplateFields, @Args(() => LevelingArgs) args: LevelingArgs, @Ctx() { loaders }: GraphQLContext) {
    const leveling = await loaders.templateLeveling.load(template.id, levelingThreshold(args));
    // The template was just read through the caller's organizations: only a delete in between could lose it.
    if (!leveling) throw new Error(`no leveling for template ${template.id}`);
    return leveling;
  }
}

@Resolver(() => Project)
class ProjectLevelingFieldResolver {
  @FieldResolver(() => ProjectLeveling, { description: 'Bid leveling of the project: its lots, the lots × contractors matrix and the sums against the budget' })
  async leveling(@Root() project: { id: string }, @Args(() => LevelingArgs) args: LevelingArgs, @Ctx() { loaders }: GraphQLContext) {
    const leveling = await loaders.projectLeveling.load(project.id, levelingThreshold(args));
    if (!leveling) throw new Error(`no leveling for project ${project.id}`);
    return leveling;
  }
}

@Resolver(() => TemplateLeveling)
class TemplateLevelingResolver {
  @FieldResolver(() => ID, { description: '"<templateId>:leveling:<abnormallyLowBelowMedianPercent>"' })
  // The root untyped: type-graphql would copy each leveling into a new TemplateLeveling to read two fields (direct-resolvers.ts).
  id(@Root() leveling: Pick<TemplateLeveling, 'templateId' | 'abnormallyLowBelowMedianPercent'>) {
    return levelingId(leveling.templateId, leveling.abnormallyLowBelowMedianPercent);
  }
}

@Resolver(() => ProjectLeveling)
class ProjectLevelingResolver {
  @FieldResolver(() => ID, { description: '"<projectId>:leveling:<abnormallyLowBelowMedianPercent>"' })
  id(@Root() leveling: Pick<ProjectLeveling, 'projectId' | 'abnormallyLowBelowMedianPercent'>) {
    return levelingId(leveling.projectId, leveling.abnormallyLowBelowMedianPercent);
  }
}

@Resolver(() => LevelingEntry)
class LevelingEntryResolver {
  @FieldResolver(() => Contractor)
  contractor(@Root() entry: LevelingEntry, @Ctx() { loaders }: GraphQLContext) {
    return loaders.contractor.load(entry.contractorId);
  }
}

@Resolver(() => LevelingColumn)
class LevelingColumnResolver {
  @FieldResolver(() => Contractor)
  contractor(@Root() column: LevelingColumn, @Ctx() { loaders }: GraphQLContext) {
    return loaders.contractor.load(column.contractorId);
  }
}

export const LEVELING_RESOLVERS = [
  TemplateLevelingFieldResolver, ProjectLevelingFieldResolver, TemplateLevelingResolver, ProjectLevelingResolver,
  LevelingEntryResolver, LevelingColumnResolver,
] as const;
