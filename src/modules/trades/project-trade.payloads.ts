import { Field, ID, ObjectType } from 'type-graphql';
import { payloadProject, type ProjectPayloadRoot } from '../projects/project.payloads';
import { ProjectTrade } from './project-trade.output';

@ObjectType({ description: '`project.trades` lists the new trade', simpleResolvers: true })
export class CreateProjectTradePayload implements ProjectPayloadRoot {
  @Field(() => ProjectTrade, { description: 'The new trade' }) trade!: ProjectTrade;
  projectId!: string;
}

@ObjectType({ description: 'Templates show the trade by reference: `trade` updates them all. `project.trades` is ordered by number, which may have changed', simpleResolvers: true })
export class UpdateProjectTradePayload implements ProjectPayloadRoot {
  @Field(() => ProjectTrade, { description: 'The trade as changed' }) trade!: ProjectTrade;
  projectId!: string;
}

@ObjectType({ description: '`project.trades` no longer lists the trade', simpleResolvers: true })
export class DeleteProjectTradePayload implements ProjectPayloadRoot {
  @Field(() => ID) deletedTradeId!: string;
  projectId!: string;
}

export const PROJECT_TRADE_PAYLOAD_RESOLVERS = [
  payloadProject(CreateProjectTradePayload), payloadProject(UpdateProjectTradePayload), payloadProject(DeleteProjectTradePayload),
] as const;
