import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { Logger } from 'pino';
import { type AppError, RetryLaterError, ValidationError } from './errors';
import { toAppError } from './database-faults';

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

/** graphql-js's parser's refusal of a document over `maxTokens` (its wording: "more that 4000 tokens"). */
const TOKEN_LIMIT = /^Syntax Error: Document contains more th(?:an|at) (\d+) tokens/;

/**
 * graphql-js's suggestions, of every kind: fields, arguments, types, enum values, in validation errors and in
 * variables' coercion errors (`Did you mean "office"?`, `Did you mean the enum value "office"?`).
 */
const SUGGESTION = / ?Did you mean [^?]*\?/g;

/** The code and message of the caller's own mistake: a limit names itself; any other is BAD_USER_INPUT. */
function clientError(message: string, error: unknown, hideSuggestions: boolean): { message: string; code: string } {
  if (exhaustedStack(error)) return { message: 'The document is nested too deeply', code: 'DEPTH_LIMIT' };
  const tokens = TOKEN_LIMIT.exec(message);
  if (tokens) return { message: `The document has more than ${tokens[1]} tokens, the limit`, code: 'TOKEN_LIMIT' };
  if (message === 'Validation aborted.') return { message: 'The document is too complex to validate: it repeats or overlaps fields too often', code: 'FIELD_REPEAT_LIMIT' };
  return { message: hideSuggestions ? message.replace(SUGGESTION, '').trim() : message, code: 'BAD_USER_INPUT' };
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

export interface GraphQLErrorFormatting {
  /** Leave graphql-js's "Did you mean ...?" out of messages: they name the schema's fields and values (introspection off). */
  hideSuggestions: boolean;
}

/**
 * Maps every error to `extensions.code` (decisions.md section 7); unexpected ones become INTERNAL_SERVER_ERROR with
 * nothing internal. The one GraphQL error mapping, for HTTP (Apollo's formatError) and WebSocket.
 */
export function graphqlErrorFormatter({ hideSuggestions }: GraphQLErrorFormatting) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const shaped = (message: string, extensions: Record<string, unknown>): GraphQLFormattedError =>
      ({ message, locations: formatted.locations, path: formatted.path, extensions });
    const classified = classifyGraphQLError(error);
    switch (classified.kind) {
      case 'service': {
        const { message, extensions } = graphqlErrorOf(classified.error);
        return shaped(message, extensions);
      }
      // Errors of the GraphQL layer itself are the caller's: BAD_USER_INPUT, or the code of the limit it went over.
      case 'client': {
        const { message, code } = clientError(formatted.message, error, hideSuggestions);
        return shaped(message, { code });
      }
      default:
        // Logged with the request id by the errors plugin (server.ts), which also adds the id here.
        return shaped('Internal server error', { code: 'INTERNAL_SERVER_ERROR' });
    }
  };
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

/**
 * An error of graphql-js's parser or validation met outside Apollo (WebSocket subscriptions), marked as the caller's
 * with the code Apollo gives it over HTTP, so that it is mapped alike (a limit keeps its own code). The parser's
 * RangeError (a document nested deeper than its recursion goes) included.
 */
export function requestError(err: unknown, code: 'GRAPHQL_PARSE_FAILED' | 'GRAPHQL_VALIDATION_FAILED'): GraphQLError {
  if (!(err instanceof GraphQLError)) {
    return new GraphQLError(err instanceof RangeError ? 'The document is nested too deeply' : 'The document could not be parsed', { originalError: err instanceof Error ? err : undefined, extensions: { code } });
  }
  return new GraphQLError(err.message, { nodes: err.nodes, source: err.source, positions: err.positions, originalError: err.originalError ?? undefined, extensions: { ...err.extensions, code } });
}
