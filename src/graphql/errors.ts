import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { Logger } from 'pino';
import { RetryLaterError, ValidationError, toAppError } from '../errors';

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

/**
 * A response whose every error says "retry later" (the database unavailable or saturated inside a resolver)
 * gets that HTTP status and `Retry-After`, like the same failure before execution and like REST
 * (decisions.md section 8): a 200 would tell clients and proxies that nothing needs retrying.
 */
export function retryLaterPlugin<T extends BaseContext & { log?: Logger }>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ errors, response, contextValue }) {
          if (!errors?.length) return;
          const known = errors.map((e) => toAppError(unwrapResolverError(e)));
          if (!known.every((e): e is RetryLaterError => e instanceof RetryLaterError)) return;
          response.http.status = Math.max(...known.map((e) => e.status));
          response.http.headers.set('retry-after', String(Math.max(...known.map((e) => e.retryAfterSeconds))));
          contextValue.log?.warn({ err: known[0].cause ?? known[0] }, known[0].message);
        },
      };
    },
  };
}
