import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { formatTimestamp, Instant } from '../values/time';

/** Timestamps as in REST: ISO 8601 UTC with microseconds and Z. */
export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  description: 'ISO 8601 UTC timestamp with microseconds: 2026-11-21T09:30:00.123456Z',
  serialize(value) {
    if (value instanceof Instant) return value.iso();
    if (value instanceof Date) return formatTimestamp(value);
    if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return formatTimestamp(new Date(value));
    throw new GraphQLError('DateTime cannot represent this value');
  },
  parseValue(value) {
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return new Date(value);
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING || Number.isNaN(Date.parse(ast.value))) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return new Date(ast.value);
  },
});
