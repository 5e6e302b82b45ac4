import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, UseMiddleware } from 'type-graphql';
import { CreateProjectInput } from './project.input';
import { encodeCursor, PAGE, pageOf } from '../../platform/database/pagination';
import { Paged } from '../../platform/graphql/cost';
import { ProjectService, type ProjectFields } from './project.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { Organization, User } from '../organizations/organization.output';
import { ArchiveProjectPayload, CreateProjectPayload } from './project.payloads';
import { Project, ProjectConnection } from './project.output';
import { ProjectStatistics } from '../statistics/statistics.output';
import { projectStatistics } from '../statistics/project-statistics.presenter';

type ProjectRoot = ProjectFields;

@UseMiddleware(uuidArguments)
@Resolver(() => Project)
export class ProjectResolver {
  @Query(() => ProjectConnection, { description: 'Projects of the caller\'s organizations, newest first' })
  @Paged(PAGE)
  async projects(
    @Ctx() { sc, selection }: GraphQLContext,
    @Arg('archived', () => Boolean, { nullable: true, description: 'true: only archived projects' }) archived?: boolean | null,
    @Arg('first', () => Int, { nullable: true, defaultValue: PAGE.default, description: `Page size (1-${PAGE.max}); ${PAGE.default} when absent or null` }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<ProjectConnection> {
    const page = await new ProjectService(sc).list({
      archived: !!archived, first: pageOf(PAGE, first), after, count: selection.has('ProjectConnection', 'totalCount'),
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
}

/** A project's relations (no arguments: nothing for uuidArguments to check). */
@Resolver(() => Project)
export class ProjectFieldsResolver {
  @FieldResolver(() => ProjectStatistics)
  statistics(@Root() project: ProjectRoot, @Ctx() { loaders }: GraphQLContext) {
    return projectStatistics(loaders, project.id);
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
