import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { CreateProjectInput } from '../../services/inputs/project.input';
import { pageSize } from '../../services/pagination';
import { ProjectService, projectFields, type ProjectView } from '../../services/project.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../uuid-args';
import { Organization } from '../types/organization.type';
import { Manager, Project, ProjectConnection } from '../types/project.type';
import { ProjectStatistics } from '../types/statistics.type';
import { encodeCursor } from '../../services/pagination';

type ProjectRoot = Omit<ProjectView, 'managers'>;

@UseMiddleware(uuidArguments)
@Resolver(() => Project)
export class ProjectResolver {
  @Query(() => ProjectConnection, { description: 'Projects of the caller\'s organizations, newest first' })
  async projects(
    @Ctx() { sc }: GraphQLContext,
    @Arg('archived', () => Boolean, { nullable: true, description: 'true: only archived projects' }) archived?: boolean | null,
    @Arg('first', () => Int, { nullable: true, description: 'Page size (1-500); all when absent' }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<ProjectConnection> {
    const page = await new ProjectService(sc).list({ archived: !!archived, first: pageSize(first, 'first'), after });
    const nodes = page.items.map(projectFields);
    return {
      nodes: nodes as Project[],
      edges: page.items.map((p, i) => ({ cursor: encodeCursor(p.createdAt, p.id), node: nodes[i] as Project })),
      pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.endCursor },
      totalCount: page.totalCount,
    };
  }

  @Query(() => Project)
  async project(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return projectFields(await new ProjectService(sc).get(id));
  }

  @Mutation(() => Project)
  async createProject(@Arg('input', () => CreateProjectInput) input: CreateProjectInput, @Ctx() { sc }: GraphQLContext) {
    return projectFields(await new ProjectService(sc).create(input));
  }

  @Mutation(() => Project, { description: 'Archives the project (idempotent)' })
  async archiveProject(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return projectFields(await new ProjectService(sc).archive(id));
  }

  @Query(() => [ProjectStatistics], { nullable: 'items', description: 'Statistics of many projects in one request, in the order of ids; null for an id the caller may not see' })
  async projectsStatistics(@Arg('ids', () => [ID]) ids: string[], @Ctx() { loaders }: GraphQLContext) {
    const stats = await loaders.projectStatistics.loadMany(ids.map((id) => id.toLowerCase()));
    // loadMany hands a failed load back as an Error per id: a fault, not a project the caller may not see.
    const failed = stats.find((s) => s instanceof Error);
    if (failed) throw failed;
    return stats.map((s, i) => (s && !(s instanceof Error) ? { projectId: ids[i], ...s } : null));
  }

  @FieldResolver(() => ProjectStatistics)
  async statistics(@Root() project: ProjectRoot, @Ctx() { loaders }: GraphQLContext) {
    return { projectId: project.id, ...(await loaders.projectStatistics.load(project.id)) };
  }

  @FieldResolver(() => Organization)
  organization(@Root() project: ProjectRoot, @Ctx() { loaders }: GraphQLContext) {
    return loaders.organization.load(project.organizationId);
  }

  @FieldResolver(() => [Manager])
  managers(@Root() project: ProjectRoot, @Ctx() { loaders }: GraphQLContext) {
    return loaders.managers.load(project.id);
  }
}
