import { registerDecorator } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { ArgsType, Field, ID } from 'type-graphql';
import { Optional, Uuid } from '../../platform/validation/rules';

/** A real calendar day written `YYYY-MM-DD` of the years 0001-9999, those PostgreSQL and ISO 8601 share (dates of #35 take no time part). */
function isDay(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value) || value.startsWith('0000')) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

function Day(): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'isDay',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must be a date written YYYY-MM-DD' },
      validator: { validate: (value: unknown) => isDay(value) },
    });
    JSONSchema({ type: 'string', format: 'date' })(target, propertyName as string);
  };
}

/** Query of credits usage (#35), also the arguments of GraphQL `creditsUsage`. */
@ArgsType()
export class CreditsUsageQuery {
  @Field(() => String, { nullable: true, description: 'First day, inclusive (YYYY-MM-DD); the first day of the month of `to` when absent' })
  @Optional() @Day()
  from?: string | null;

  @Field(() => String, { nullable: true, description: 'Last day, inclusive (YYYY-MM-DD); today (UTC) when absent' })
  @Optional() @Day()
  to?: string | null;

  @Field(() => ID, { nullable: true, description: 'Organization to report on instead of the current one' })
  @Optional() @Uuid()
  organizationId?: string | null;

  @Field(() => ID, { nullable: true, description: 'Headquarter whose member organizations are reported on together' })
  @Optional() @Uuid()
  headquarterId?: string | null;
}
