import { Arg, Ctx, ID, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { ProjectStatisticsView } from './statistics.service';
import { statisticsOf } from './project-statistics.presenter';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { ProjectStatistics } from './statistics.output';

@UseMiddleware(uuidArguments)
@Resolver(() => ProjectStatistics)
export class StatisticsResolver {
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
