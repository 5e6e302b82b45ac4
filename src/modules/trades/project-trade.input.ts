import { Field, InputType } from 'type-graphql';
import { Optional, Required, Text } from '../../platform/validation/rules';

/** Body of POST project trades: `comment` is not accepted on create (interface.md, Project trade). */
@InputType('CreateProjectTradeInput')
export class CreateProjectTradeInput {
  @Field(() => String)
  @Required() @Text()
  name!: string;

  @Field(() => String, { description: 'Lot number, e.g. "02"' })
  @Required() @Text(32)
  number!: string;

  @Field(() => String)
  @Required() @Text()
  shortName!: string;
}

/** Body of PUT project trade: the whole trade; `comment` left out keeps the current one, null clears it. */
@InputType('UpdateProjectTradeInput')
export class UpdateProjectTradeInput {
  @Field(() => String)
  @Required() @Text()
  name!: string;

  @Field(() => String, { description: 'Lot number, e.g. "02"' })
  @Required() @Text(32)
  number!: string;

  @Field(() => String)
  @Required() @Text()
  shortName!: string;

  @Field(() => String, { nullable: true, description: 'Left out: unchanged; null: removed' })
  @Optional() @Text(5000)
  comment?: string | null;
}
