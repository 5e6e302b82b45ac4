import type { ProjectStatisticsView } from './statistics.service';
import type { GraphQLContext } from '../context';

// Kept apart from statistics.resolver.ts, which the schema loads after the projects' resolver: importing a resolver
// runs its decorators, and their order is the order of the fields in schema.graphql.

/** A project's statistics as a cacheable object: keyed by an id derived from the project's (lowercase) id. */
export function statisticsOf(projectId: string, view: ProjectStatisticsView | null) {
  return view && { id: `${projectId}:statistics`, projectId, ...view };
}

/** `Project.statistics`, for the project's resolver (declared there, so that the type's fields keep their order). */
export async function projectStatistics(loaders: GraphQLContext['loaders'], projectId: string) {
  return statisticsOf(projectId, await loaders.projectStatistics.load(projectId));
}
