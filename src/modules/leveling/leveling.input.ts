import { registerDecorator } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { ArgsType, Field, Float } from 'type-graphql';
import { OneOf, Optional } from '../../platform/validation/rules';

/** What `abnormally_low` compares with when the caller names no threshold (issue 13). */
const DEFAULT_ABNORMALLY_LOW_PERCENT = 20;

/** A number, or (REST query strings) its plain decimal writing, within 0-100. */
const DECIMAL = /^\d{1,3}(\.\d{1,6})?$/;
function isPercentInput(value: unknown): boolean {
  const n = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL.test(value) ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 && n <= 100;
}

function Percent(): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'isPercent',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must be a number from 0 to 100' },
      validator: { validate: isPercentInput },
    });
    JSONSchema({ type: 'number', minimum: 0, maximum: 100, default: DEFAULT_ABNORMALLY_LOW_PERCENT })(target, propertyName as string);
  };
}

/** Arguments of GraphQL `leveling` (Template and Project); the query of the REST leveling paths adds `format`. */
@ArgsType()
export class LevelingArgs {
  @Field(() => Float, {
    nullable: true,
    defaultValue: DEFAULT_ABNORMALLY_LOW_PERCENT,
    description: 'An offer is abnormally low when it is below the median offer of its lot by more than this percent (0-100)',
  })
  @Optional() @Percent()
  abnormallyLowBelowMedianPercent?: number | string | null;
}

const LEVELING_FORMATS = ['json', 'xlsx', 'csv'] as const;
export type LevelingFormat = (typeof LEVELING_FORMATS)[number];

/** Query of `GET .../leveling`. */
export class ProjectLevelingQuery extends LevelingArgs {
  @Optional() @OneOf(LEVELING_FORMATS)
  @JSONSchema({ description: 'Answer as JSON, as a spreadsheet (xlsx) or as the lots × contractors matrix (csv); wins over `Accept`' })
  format?: LevelingFormat;
}

/** The threshold an input names, or the default. */
export function levelingThreshold(input: LevelingArgs): number {
  const value = input.abnormallyLowBelowMedianPercent;
  return value === null || value === undefined ? DEFAULT_ABNORMALLY_LOW_PERCENT : Number(value);
}
