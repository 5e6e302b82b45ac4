import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { Logger } from 'pino';
import { type AppError, RetryLaterError, ValidationError, toAppError } from './errors';

/** Codes graphql-js and Apollo give the caller's own mistakes (syntax, unknown fields, limits, variables). */
const CLIENT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * Whose an error is: `service`, a typed error of ours (its own code and status); `client`, the caller's
 * request itself (syntax, validation, limits, variables, use of HTTP); `fault`, anything else, a fault of
 * the server. Both the answer (formatError) and the log level (server.ts) follow it.
 */
export type GraphQLErrorKind = { kind: 'service'; error: AppError } | { kind: 'client' } | { kind: 'fault' };

/** Takes an error as Apollo hands it to plugins and to formatError (before Apollo's default code is added). */
export function classifyGraphQLError(error: unknown): GraphQLErrorKind {
  const original = unwrapResolverError(error);
  // A typed error of ours wrapped before execution (a subscription refused in onSubscribe) keeps its code too.
  const known = toAppError(original) ?? (original instanceof GraphQLError && original.originalError ? toAppError(original.originalError) : null);
  if (known) return { kind: 'service', error: known };
  if (!(error instanceof GraphQLError)) return { kind: 'fault' };
  const code = error.extensions.code;
  const status = (error.extensions.http as { status?: unknown } | undefined)?.status;
  // Apollo marks what it refuses of a request with a 4xx status, not always with a code.
  if (typeof status === 'number' && status >= 400 && status < 500) return { kind: 'client' };
  if (typeof code !== 'string' || code === 'INTERNAL_SERVER_ERROR') return { kind: 'fault' };
  // A GraphQL error raised with a code of its own, not wrapping an exception, is a refusal of the request.
  return CLIENT_CODES.has(code) || (original instanceof GraphQLError && !original.originalError) ? { kind: 'client' } : { kind: 'fault' };
}

/**
 * graphql-js parses recursively: a document nested a few thousand levels deep (within the token limit)
 * exhausts the stack, and Apollo answers the RangeError as a syntax error, with the engine's message.
 */
function exhaustedStack(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = (e as { originalError?: unknown }).originalError, depth++) {
    if (e instanceof RangeError) return true;
  }
  return false;
}

/**
 * The GraphQL body of one of our errors, or of a fault (null: nothing internal, the request id to name it in
 * the log): the one place it is built, for errors inside an operation (formatError) and before it runs
 * (src/platform/errors/http.ts: a refused token, a rate limit, a database outage at authentication).
 */
export function graphqlErrorOf(known: AppError | null, requestId?: string): { message: string; extensions: Record<string, unknown> } {
  if (!known) return { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR', ...(requestId ? { request_id: requestId } : {}) } };
  const extensions: Record<string, unknown> = { code: known.code };
  if (known instanceof ValidationError && known.errors.length) extensions.errors = known.errors;
  return { message: known.message, extensions };
}

/**
 * Maps every error to `extensions.code` (decisions.md section 7); unexpected ones become
 * INTERNAL_SERVER_ERROR with nothing internal. The one GraphQL error mapping.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const shaped = (message: string, extensions: Record<string, unknown>): GraphQLFormattedError =>
    ({ message, locations: formatted.locations, path: formatted.path, extensions });
  const classified = classifyGraphQLError(error);
  switch (classified.kind) {
    case 'service': {
      const { message, extensions } = graphqlErrorOf(classified.error);
      return shaped(message, extensions);
    }
    // Errors of the GraphQL layer itself are the caller's: one documented code for them all.
    case 'client':
      return shaped(exhaustedStack(error) ? 'The document is nested too deeply' : formatted.message, { code: 'BAD_USER_INPUT' });
    default:
      // Logged with the request id by the errors plugin (server.ts), which also adds the id here.
      return shaped('Internal server error', { code: 'INTERNAL_SERVER_ERROR' });
  }
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
