import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { CreateProjectInput } from './project.input';
import { encodeCursor, pageSize } from '../../platform/database/pagination';
import { ProjectService, type ProjectFields } from './project.service';
import type { ProjectStatisticsView } from '../statistics/statistics.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { Organization, User } from '../organizations/organization.output';
import { ArchiveProjectPayload, CreateProjectPayload } from './project.payloads';
import { Project, ProjectConnection } from './project.output';
import { ProjectStatistics } from '../statistics/statistics.output';

type ProjectRoot = ProjectFields;

/** A project's statistics as a cacheable object: keyed by an id derived from the project's (lowercase) id. */
function statisticsOf(projectId: string, view: ProjectStatisticsView | null) {
  return view && { id: `${projectId}:statistics`, projectId, ...view };
}

@UseMiddleware(uuidArguments)
@Resolver(() => Project)
export class ProjectResolver {
  @Query(() => ProjectConnection, { description: 'Projects of the caller\'s organizations, newest first' })
  async projects(
    @Ctx() { sc, selection }: GraphQLContext,
    @Arg('archived', () => Boolean, { nullable: true, description: 'true: only archived projects' }) archived?: boolean | null,
    @Arg('first', () => Int, { nullable: true, description: 'Page size (1-500); all when absent' }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<ProjectConnection> {
    const page = await new ProjectService(sc).list({
      archived: !!archived, first: pageSize(first, 'first'), after, count: selection.has('ProjectConnection', 'totalCount'),
    });
    const nodes = page.items as Project[];
    const edges = page.items.map((p, i) => ({ cursor: encodeCursor(p.createdAt, p.id), node: nodes[i] }));
    return {
      nodes,
      edges,
      pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: !!after, startCursor: edges[0]?.cursor ?? null, endCursor: page.endCursor },
      // Counted whenever the operation selects it (selection.ts): null never reaches an answer.
      totalCount: page.totalCount!,
    };
  }

  @Query(() => Project)
  async project(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new ProjectService(sc).get(id);
  }

  @Mutation(() => CreateProjectPayload)
  async createProject(@Arg('input', () => CreateProjectInput) input: CreateProjectInput, @Ctx() { sc }: GraphQLContext) {
    const service = new ProjectService(sc);
    return { project: await service.get((await service.create(input)).id) };
  }

  @Mutation(() => ArchiveProjectPayload, { description: 'Archives the project (idempotent)' })
  async archiveProject(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    const service = new ProjectService(sc);
    return { project: await service.get((await service.archive(id)).id) };
  }

  @Query(() => [ProjectStatistics], { nullable: 'items', description: 'Statistics of many projects in one request, in the order of ids; null for an id the caller may not see' })
  async projectsStatistics(@Arg('ids', () => [ID]) ids: string[], @Ctx() { loaders }: GraphQLContext) {
    const canonical = ids.map((id) => id.toLowerCase());
    const stats = await loaders.projectStatistics.loadMany(canonical);
    // loadMany hands a failed load back as an Error per id: a fault, not a project the caller may not see.
    const failed = stats.find((s) => s instanceof Error);
    if (failed) throw failed;
    return stats.map((s, i) => statisticsOf(canonical[i], s as ProjectStatisticsView | null));
  }
}

/** A project's relations (no arguments: nothing for uuidArguments to check). */
@Resolver(() => Project)
export class ProjectFieldsResolver {
  @FieldResolver(() => ProjectStatistics)
  async statistics(@Root() project: ProjectRoot, @Ctx() { loaders }: GraphQLContext) {
    return statisticsOf(project.id, await loaders.projectStatistics.load(project.id));
  }

  @FieldResolver(() => Organization)
  organization(@Root() project: ProjectRoot, @Ctx() { loaders }: GraphQLContext) {
    return loaders.organization.load(project.organizationId);
  }

  @FieldResolver(() => [User], { description: 'The project\'s managers, by last name' })
  managers(@Root() project: ProjectRoot, @Ctx() { loaders }: GraphQLContext) {
    return loaders.managers.load(project.id);
  }
}
