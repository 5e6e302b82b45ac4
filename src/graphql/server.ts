import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import Router from '@koa/router';
import type { Config } from '../config';
import { toAppError } from '../errors';
import { authenticateRequest } from '../http/auth.middleware';
import { jsonBody } from '../http/body.middleware';
import type { AppMiddleware, AppState } from '../http/state';
import type { TokenVerifier } from '../services/token-verifier';
import { createContext, type GraphQLContext } from './context';
import { formatError, retryLaterPlugin } from './errors';
import { graphqlSchema } from './schema';

/** Limits against expensive queries (values documented in docs/decisions.md). */
export const GRAPHQL_LIMITS = {
  maxDepth: 12,
  maxAliases: 15,
  maxCost: 20000,
  maxTokens: 4000,
  maxDirectives: 20,
};

type Context = GraphQLContext & { requestId: string; log: AppState['log'] };

/** Logs unexpected errors under the request id and gives that id to the caller. */
const errorsPlugin: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, contextValue }) {
        for (const err of errors) {
          if (!toAppError(err.originalError) && err.originalError) contextValue.log?.error({ err: err.originalError }, 'unexpected GraphQL error');
        }
      },
      async willSendResponse({ response, contextValue }) {
        if (response.body.kind !== 'single') return;
        for (const e of response.body.singleResult.errors ?? []) {
          if (e.extensions?.code === 'INTERNAL_SERVER_ERROR') (e.extensions as Record<string, unknown>).request_id = contextValue.requestId;
        }
      },
    };
  },
};

/** GraphQL at /graphql: bearer token checked before anything runs, then Apollo over the services. */
export async function graphqlRoutes(config: Config, verifier: TokenVerifier): Promise<{ router: Router<AppState>; stop(): Promise<void> }> {
  const armor = new ApolloArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    blockFieldSuggestion: { enabled: !config.graphql.introspection },
  });
  const protection = armor.protect();
  const server = new ApolloServer<Context>({
    schema: await graphqlSchema(),
    introspection: config.graphql.introspection,
    plugins: [
      ...(protection.plugins as ApolloServerPlugin<Context>[]),
      errorsPlugin,
      retryLaterPlugin<Context>(),
      config.graphql.landingPage ? ApolloServerPluginLandingPageLocalDefault({ footer: false }) : ApolloServerPluginLandingPageDisabled(),
    ],
    validationRules: protection.validationRules,
    allowBatchedHttpRequests: false,
    includeStacktraceInErrorResponses: false,
    formatError,
    // server.ts owns shutdown: HTTP server first, then this, then the database.
    stopOnTerminationSignals: false,
  });
  await server.start();
  const { koaMiddleware } = await import('@as-integrations/koa');
  // The integration is ESM-only and types ApolloServer from the ESM build; ours is the CommonJS one.
  const apollo = koaMiddleware(server as never, {
    context: async ({ ctx }: { ctx: { state: AppState } }) => ({
      ...createContext({ em: ctx.state.em, caller: ctx.state.caller!, config }),
      requestId: ctx.state.requestId,
      log: ctx.state.log,
    }),
  } as never) as unknown as AppMiddleware;

  // A request without a valid token is answered before any field runs; the errors middleware writes it in
  // GraphQL's shape (src/http/errors.middleware.ts).
  const authenticate: AppMiddleware = async (ctx, next) => {
    const wantsLandingPage = ctx.method === 'GET' && config.graphql.landingPage && ctx.accepts('text/html', 'application/json') === 'text/html' && !ctx.query.query;
    if (wantsLandingPage) return next();
    await authenticateRequest(ctx, verifier);
    return next();
  };

  const router = new Router<AppState>();
  router.post('/graphql', authenticate, jsonBody(), apollo);
  router.get('/graphql', authenticate, apollo);
  return { router, stop: () => server.stop() };
}
