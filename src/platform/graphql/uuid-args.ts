import { GraphQLID, getNullableType } from 'graphql';
import { isUUID } from 'class-validator';
import type { MiddlewareFn } from 'type-graphql';
import { ValidationError, type FieldError } from '../errors/errors';

/**
 * Every `ID` argument of this schema names a record by UUID: a malformed one is the caller's error
 * (BAD_USER_INPUT naming the argument, as REST's 400 for a path id), never a failed SQL cast (500).
 * Lists of ids are left alone: `projectsStatistics` answers null for an id it cannot see.
 */
/** Applied to the resolver classes of root fields (nested fields take no arguments). */
export const uuidArguments: MiddlewareFn = async ({ args, info }, next) => {
  if (!args || !Object.keys(args).length) return next();
  const definitions = info.parentType.getFields()[info.fieldName]?.args ?? [];
  const errors: FieldError[] = [];
  for (const arg of definitions) {
    const value: unknown = args[arg.name];
    if (getNullableType(arg.type) === GraphQLID && value != null && !isUUID(String(value), 'all')) {
      errors.push({ field: arg.name, message: 'must be a UUID' });
    }
  }
  if (errors.length) throw new ValidationError(errors);
  return next();
};
