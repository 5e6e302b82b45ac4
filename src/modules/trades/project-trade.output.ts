import { Field, ID, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { Rest } from '../../platform/outputs/output';

/** A trade (lot) of a project, wherever it appears: in `Project.trades` and as a template's `trade`. */
@ObjectType({ description: 'A trade (lot) of a project', simpleResolvers: true })
export class ProjectTrade {
  @Field(() => ID) @Rest({ example: DEMO_IDS.projectTrades.residence['01'] }) id!: string;
  @Field(() => ID) @Rest({ example: DEMO_IDS.projects.residence }) projectId!: string;
  @Field() @Rest({ example: '01' }) number!: string;
  @Field() @Rest({ example: 'Gros œuvre' }) name!: string;
  @Field() @Rest({ example: 'GO' }) shortName!: string;
  @Field(() => String, { nullable: true }) comment!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}
