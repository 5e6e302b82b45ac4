import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root, UseMiddleware } from 'type-graphql';
import { CreateProjectTradeInput, UpdateProjectTradeInput } from './project-trade.input';
import { ProjectTradeService } from './project-trade.service';
import type { ProjectView } from '../projects/project.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { CreateProjectTradePayload, DeleteProjectTradePayload, UpdateProjectTradePayload } from './project-trade.payloads';
import { Project } from '../projects/project.output';
import { ProjectTrade } from './project-trade.output';

@Resolver(() => Project)
export class ProjectTradesFieldResolver {
  @FieldResolver(() => [ProjectTrade], { description: 'The trades (lots) of the project, by number' })
  trades(@Root() project: Pick<ProjectView, 'id'>, @Ctx() { loaders }: GraphQLContext) {
    return loaders.trades.load(project.id);
  }
}

@UseMiddleware(uuidArguments)
@Resolver(() => ProjectTrade)
export class ProjectTradeResolver {
  @Mutation(() => CreateProjectTradePayload)
  async createProjectTrade(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('input', () => CreateProjectTradeInput) input: CreateProjectTradeInput,
    @Ctx() { sc }: GraphQLContext,
  ) {
    const trade = await new ProjectTradeService(sc).create(projectId, input);
    return { trade, projectId: trade.projectId };
  }

  @Mutation(() => UpdateProjectTradePayload)
  async updateProjectTrade(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('tradeId', () => ID) tradeId: string,
    @Arg('input', () => UpdateProjectTradeInput) input: UpdateProjectTradeInput,
    @Ctx() { sc }: GraphQLContext,
  ) {
    const trade = await new ProjectTradeService(sc).update(projectId, tradeId, input);
    return { trade, projectId: trade.projectId };
  }

  @Mutation(() => DeleteProjectTradePayload, { description: 'Deletes a trade; CONFLICT while templates use it' })
  async deleteProjectTrade(@Arg('projectId', () => ID) projectId: string, @Arg('tradeId', () => ID) tradeId: string, @Ctx() { sc }: GraphQLContext) {
    const deleted = await new ProjectTradeService(sc).delete(projectId, tradeId);
    return { deletedTradeId: deleted.tradeId, projectId: deleted.projectId };
  }
}
