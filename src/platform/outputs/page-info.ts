import { Field, ObjectType } from 'type-graphql';

/** Relay's PageInfo. Pages only go forward (`first`, `after`). */
@ObjectType({ simpleResolvers: true })
export class PageInfo {
  @Field() hasNextPage!: boolean;
  @Field({ description: 'true when the page was asked for `after` a cursor' }) hasPreviousPage!: boolean;
  @Field(() => String, { nullable: true, description: 'Cursor of the first edge; null for an empty page' }) startCursor!: string | null;
  @Field(() => String, { nullable: true, description: 'Cursor of the last edge; null for an empty page' }) endCursor!: string | null;
}
