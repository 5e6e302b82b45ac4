import { Field, Float, ID, InputType } from 'type-graphql';
import { AtLeast, AtMost, Num, Optional, PageSize, Required, Text, Uuid } from '../../platform/validation/rules';
import { JSONSchema } from 'class-validator-jsonschema';

/** The largest amount a budget column (numeric 14,2) holds. */
const MAX_AMOUNT = 999999999999.99;

/** Template (DPGF template) input of interface.md. */
@InputType('AddTemplateInput')
export class AddTemplateInput {
  @Field(() => ID, { description: 'A trade of the project' })
  @Required() @Uuid()
  tradeId!: string;

  @Field(() => String, { nullable: true, description: 'Name of the slice; "Tranche N" when absent. Ignored when the trade has no template yet' })
  @Optional() @Text()
  sliceName?: string | null;

  @Field(() => Float, { nullable: true, description: 'Budget amount, 0 when absent' })
  @Optional() @Num() @AtLeast(0) @AtMost(MAX_AMOUNT)
  budget?: number | null;
}

/** Query of the template lists (#10, #12): paged when `limit` is sent. */
export class ListTemplatesQuery {
  @Optional() @PageSize()
  limit?: string;

  @Optional() @Text(512) @JSONSchema({ description: '`next_cursor` of the previous page' })
  cursor?: string;
}
