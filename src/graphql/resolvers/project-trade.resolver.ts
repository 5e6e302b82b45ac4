import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root, UseMiddleware } from 'type-graphql';
import { CreateProjectTradeInput, UpdateProjectTradeInput } from '../../services/inputs/project-trade.input';
import { ProjectTradeService } from '../../services/project-trade.service';
import type { ProjectView } from '../../services/project.service';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../uuid-args';
import { Project, ProjectTrade } from '../types/project.type';

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
  @Mutation(() => ProjectTrade)
  createProjectTrade(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('input', () => CreateProjectTradeInput) input: CreateProjectTradeInput,
    @Ctx() { sc }: GraphQLContext,
  ) {
    return new ProjectTradeService(sc).create(projectId, input);
  }

  @Mutation(() => ProjectTrade)
  updateProjectTrade(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('tradeId', () => ID) tradeId: string,
    @Arg('input', () => UpdateProjectTradeInput) input: UpdateProjectTradeInput,
    @Ctx() { sc }: GraphQLContext,
  ) {
    return new ProjectTradeService(sc).update(projectId, tradeId, input);
  }

  @Mutation(() => Boolean, { description: 'true once deleted; CONFLICT while templates use the trade' })
  async deleteProjectTrade(@Arg('projectId', () => ID) projectId: string, @Arg('tradeId', () => ID) tradeId: string, @Ctx() { sc }: GraphQLContext) {
    await new ProjectTradeService(sc).delete(projectId, tradeId);
    return true;
  }
}
