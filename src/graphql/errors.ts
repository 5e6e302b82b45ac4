import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { ValidationError, toAppError } from '../errors';

/** Codes graphql-js and Apollo give the caller's own mistakes (syntax, unknown fields, limits, variables). */
const CLIENT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * Maps every error to `extensions.code` (decisions.md section 7); unexpected ones become
 * INTERNAL_SERVER_ERROR with nothing internal. The one GraphQL error mapping.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const shaped = (message: string, extensions: Record<string, unknown>): GraphQLFormattedError =>
    ({ message, locations: formatted.locations, path: formatted.path, extensions });
  const original = unwrapResolverError(error);
  const known = toAppError(original);
  if (known) {
    return shaped(known.message, { code: known.code, ...(known instanceof ValidationError ? { errors: known.errors } : {}) });
  }
  const code = String(formatted.extensions?.code ?? '');
  // Errors of the GraphQL layer itself are the caller's: one documented code for them all.
  if (CLIENT_CODES.has(code) || (original instanceof GraphQLError && !original.originalError && code !== 'INTERNAL_SERVER_ERROR')) {
    return shaped(formatted.message, { code: 'BAD_USER_INPUT' });
  }
  // Logged with the request id by the errors plugin (server.ts), which also adds the id here.
  return shaped('Internal server error', { code: 'INTERNAL_SERVER_ERROR' });
}
