import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled, ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import Router from '@koa/router';
import { GraphQLError, Kind, getOperationAST, parse, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { Config } from '../config';
import { MethodNotAllowedError } from '../errors/errors';
import { identifyCaller, verifiedToken, verifyRequest } from '../http/auth.middleware';
import { jsonBody } from '../http/body.middleware';
import { idempotency } from '../http/idempotency';
import type { AppContext, AppMiddleware, AppState } from '../http/state';
import { Metrics } from '../metrics';
import type { TokenVerifier } from '../auth/token-verifier';
import { trustedDocumentOf, trustedDocumentsRewrite, type TrustedDocumentsSettings } from './trusted-documents';
import type { CallerCache } from '../auth/caller-cache';
import { operationRouting, type GraphQLContext, type LoadersFactory } from './context';
import { classifyGraphQLError, graphqlErrorFormatter, retryLaterPlugin } from '../errors/graphql';
import { compiledExecution } from './executor';
import { admitted, type Admission } from '../http/admission';
import { OperationSelection } from './selection';
import { createIde, IDE_ASSETS_PATH } from './ide';
import { checkDocumentSize, GRAPHQL_LIMITS, limitRules } from './limits';
import { costPlugin, type CostBudget, type CostContext } from './cost';
import { DocumentCache } from './document-cache';
import { advertise, subjectKey } from '../http/rate-limit.middleware';

/**
 * Apollo's CSRF check, counting `Authorization` as the header that forces a CORS preflight: no cross-site form or
 * simple request can send it, and every operation needs it, so a plain GET with a bearer token runs
 * (decisions.md section 8) while a request reaching Apollo with none of these headers and a simple content type
 * would be refused 400. The other two are Apollo Client's own.
 */
export const CSRF_PREVENTION = { requestHeaders: ['authorization', 'x-apollo-operation-name', 'apollo-require-preflight'] };

type Context = GraphQLContext & CostContext & { requestId: string; log: AppState['log'] };

/**
 * Logs a request's errors by whose they are (src/platform/errors/graphql.ts): server faults at ERROR with their stack,
 * the caller's own mistakes in one DEBUG line, however many errors they caused (300 repeated directives: 101).
 * Gives the request id to the caller with an INTERNAL_SERVER_ERROR, and a 4xx to a request that ran nothing.
 */
const errorsPlugin: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, contextValue }) {
        const log = contextValue?.log;
        if (!log) return;
        const refusals: string[] = [];
        for (const error of errors) {
          const classified = classifyGraphQLError(error);
          if (classified.kind === 'fault') log.error({ err: error.originalError ?? error, path: error.path }, 'unexpected GraphQL error');
          else if (classified.kind === 'service' && classified.error.status >= 500) log.warn({ path: error.path }, classified.error.message);
          else refusals.push(error.message);
        }
        if (refusals.length) log.debug({ errors: refusals.length, first: refusals[0].slice(0, 200) }, 'GraphQL errors caused by the request');
      },
      async willSendResponse({ response, contextValue }) {
        if (response.body.kind !== 'single') return;
        const result = response.body.singleResult;
        for (const e of result.errors ?? []) {
          if (e.extensions?.code === 'INTERNAL_SERVER_ERROR') (e.extensions as Record<string, unknown>).request_id = contextValue.requestId;
        }
        // A request refused before execution has no `data`; Apollo answers a few of them (persisted queries) 200.
        if (result.errors?.length && !('data' in result) && (response.http.status ?? 200) < 400) response.http.status = 400;
      },
    };
  },
};

/**
 * Counts and times every operation Apollo answers by operation name (bounded: Metrics.operationLabel), type
 * and the code of its first error.
 */
function metricsPlugin(metrics: Metrics): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      return {
        async willSendResponse({ operation, operationName, response }) {
          const name = metrics.operationLabel(operationName ?? operation?.name?.value, operation !== undefined);
          const type = operation?.operation ?? 'unknown';
          const first = response.body.kind === 'single' ? response.body.singleResult.errors?.[0] : undefined;
          const code = Metrics.errorCodeLabel(first ? first.extensions?.code ?? 'INTERNAL_SERVER_ERROR' : undefined);
          metrics.graphqlOperations.inc({ operation_name: name, operation_type: type, error_code: code });
          metrics.graphqlDuration.observe({ operation_name: name, operation_type: type }, Number(process.hrtime.bigint() - started) / 1e9);
        },
      };
    },
  };
}

/**
 * Reads what the operation selects once it is known, before any field runs: the loaders ask the database only
 * for that (src/platform/graphql/selection.ts).
 */
const selectionPlugin: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ schema, document, operation, contextValue }) {
        if (operation) contextValue.selection.read(schema, document, operation);
      },
    };
  },
};

/**
 * Subscriptions run over a long-lived connection, never over a GET or a POST: refused at validation, before
 * anything runs. (Rules given to Apollo apply to /graphql over HTTP only.)
 *
 * Refused on entering the document, and taken out of what the other rules visit: graphql-js's
 * SingleFieldSubscriptionsRule, which Apollo runs first, evaluates the root fields' `@include`/`@skip` with no
 * variables and throws (Apollo's 500) on one that names a variable. The document Apollo keeps is unchanged.
 */
const noSubscriptionsOverHttp: ValidationRule = (context) => ({
  Document(node) {
    const subscriptions = node.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'subscription');
    if (!subscriptions.length) return undefined;
    for (const subscription of subscriptions) {
      context.reportError(new GraphQLError('Subscriptions are not served over HTTP', { nodes: subscription, extensions: { code: 'BAD_USER_INPUT' } }));
    }
    return { ...node, definitions: node.definitions.filter((d) => !subscriptions.includes(d)) };
  },
});

/**
 * A browser navigating to /graphql: a GET that prefers HTML to JSON (negotiated as Apollo does: accepting any
 * type, as curl does, means JSON) and carries no operation at all. Only this request may go without a token: it
 * gets the IDE page (src/platform/graphql/ide), and nothing reaches Apollo.
 */
function isLandingPageRequest(ctx: AppContext): boolean {
  return ctx.method === 'GET'
    && ctx.accepts('application/json', 'application/graphql-response+json', 'text/html') === 'text/html'
    && ['query', 'extensions', 'operationName', 'variables'].every((name) => ctx.query[name] === undefined);
}

/**
 * Whether a POST /graphql body holds a mutation to run (unparsable: Apollo answers it, no key applies), the document
 * named by id included; decided once per request, before its turn: a mutation mostly waits on the database and takes
 * a write turn (src/platform/http/admission.ts). Only a text that says `mutation` is parsed.
 */
function mutationDetector(settings: TrustedDocumentsSettings): (ctx: AppContext) => boolean {
  const known = new WeakMap<AppContext, boolean>();
  const detect = (ctx: AppContext): boolean => {
    if (ctx.method !== 'POST') return false;
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
    let text = typeof body.query === 'string' ? body.query : null;
    try {
      text = trustedDocumentOf(settings, body, null) ?? text;
    } catch {
      // Refused as it should be once the caller is known (the `trusted` layer).
    }
    if (text === null || !text.includes('mutation')) return false;
    try {
      const operation = getOperationAST(parse(text, { maxTokens: GRAPHQL_LIMITS.maxTokens }), typeof body.operationName === 'string' ? body.operationName : undefined);
      return operation?.operation === 'mutation';
    } catch {
      return false;
    }
  };
  return (ctx) => {
    let mutation = known.get(ctx);
    if (mutation === undefined) known.set(ctx, mutation = detect(ctx));
    return mutation;
  };
}

/**
 * A keyed mutation is kept only when it answered without errors: with an error, every write of the request is
 * rolled back, and the answer says so (`data: null`, the errors as they were).
 */
function mutationSucceeded(ctx: AppContext): boolean {
  // The answer is a Buffer (encoded once: graphqlRoutes' `answer`), or a string where a middleware wrote one.
  const text = Buffer.isBuffer(ctx.body) ? ctx.body.toString('utf8') : ctx.body;
  if (ctx.status !== 200 || typeof text !== 'string') return false;
  const answer = JSON.parse(text) as { data?: unknown; errors?: unknown[] };
  if (!answer.errors?.length) return true;
  ctx.body = JSON.stringify({ ...answer, data: null });
  return false;
}

/** What the modules give the GraphQL server (src/modules/schema.ts, src/modules/context.ts). */
interface GraphQLModules {
  schema: GraphQLSchema;
  /** A request's loaders: each request, and each re-run of an operation on the primary, gets its own. */
  createLoaders: LoadersFactory;
}

/** What the GraphQL routes work with besides the configuration. */
export interface GraphQLRouteDeps {
  verifier: TokenVerifier;
  callers: CallerCache;
  metrics: Metrics;
  modules: GraphQLModules;
  admission: Admission;
  /** The callers' GraphQL cost budgets (src/platform/graphql/cost.ts). */
  budget: CostBudget;
  /** The front end's trusted documents, the manifest read at start (trusted-documents.ts, `readTrustedDocuments`). */
  trustedDocuments: TrustedDocumentsSettings;
}

/** GraphQL at /graphql: bearer token checked before anything runs, then Apollo over the services. */
export async function graphqlRoutes(config: Config, deps: GraphQLRouteDeps): Promise<{ router: Router<AppState>; stop(): Promise<void> }> {
  const { verifier, callers, metrics, modules, admission } = deps;
  const { budget, trustedDocuments } = deps;
  const server = new ApolloServer<Context>({
    // The schema, executed by compiled queries (executor.ts).
    gateway: compiledExecution(modules.schema),
    // Parsed and validated documents, bounded by what they really hold (document-cache.ts).
    documentStore: new DocumentCache(),
    introspection: config.graphql.introspection,
    plugins: [
      selectionPlugin,
      costPlugin<Context>(budget),
      errorsPlugin,
      retryLaterPlugin<Context>(),
      metricsPlugin(metrics),
      // Cache-Control is the HTTP layer's, alike for REST and GraphQL (src/platform/http/auth.middleware.ts); Apollo's
      // plugin would also compute a cache hint for every field of every answer.
      ApolloServerPluginCacheControlDisabled(),
      // Apollo Studio is not used: no per-field traces, whatever APOLLO_KEY the environment may hold.
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      // Apollo's own landing page loads its IDE and fonts from the internet: ours is served below.
      ApolloServerPluginLandingPageDisabled(),
    ],
    validationRules: [...limitRules(), noSubscriptionsOverHttp],
    parseOptions: { maxTokens: GRAPHQL_LIMITS.maxTokens },
    allowBatchedHttpRequests: false,
    // Persisted queries: none (docs/decisions.md); a request naming one is refused with 400.
    persistedQueries: false,
    csrfPrevention: CSRF_PREVENTION,
    includeStacktraceInErrorResponses: false,
    formatError: graphqlErrorFormatter({ hideSuggestions: !config.graphql.introspection }),
    // server.ts owns shutdown: HTTP server first, then this, then the database.
    stopOnTerminationSignals: false,
  });
  await server.start();
  const { koaMiddleware } = await import('@as-integrations/koa');
  // The integration is ESM-only and types ApolloServer from the ESM build; ours is the CommonJS one.
  const apollo = koaMiddleware(server as never, {
    context: async ({ ctx }: { ctx: { state: AppState } }) => {
      // Unreachable without a caller: every request that reaches Apollo went through identify (below).
      if (!ctx.state.caller) throw new Error('GraphQL context requested without an authenticated caller');
      const sc = { em: ctx.state.em, primaryEm: ctx.state.em, caller: ctx.state.caller, config, callers, log: ctx.state.log };
      const selection = new OperationSelection();
      const cost = { key: subjectKey((await ctx.state.token!).sub), outcome: null, refused: null };
      ctx.state.graphqlCost = cost;
      const context: Context = { sc, loaders: modules.createLoaders(sc, selection), selection, cost, requestId: ctx.state.requestId, log: ctx.state.log };
      if (ctx.state.reads) context.routing = operationRouting(ctx.state.reads, ctx.state.em, modules.createLoaders);
      return context;
    },
  } as never) as unknown as AppMiddleware;
  // The integration sets the body before Apollo's headers: without a type, Koa guesses one with a regular expression
  // over the answer, which copies a dashboard's 2 MB (a concatenated string is flattened first). Apollo's own
  // Content-Type replaces this one.
  // And it sets the answer as a string: Koa measures its UTF-8 length (a pass over it), then the socket encodes it
  // (another). Accented names make both slow paths (15 ms each for 3 MB). Encoded once here, its length is the
  // buffer's. The integration sees the request's context through this view; the body it sets becomes a Buffer.
  const answer: AppMiddleware = (ctx, next) => {
    ctx.type = 'application/json';
    const view = Object.create(ctx, {
      body: {
        get: () => ctx.body,
        set: (value: unknown) => { ctx.body = typeof value === 'string' ? Buffer.from(value) : value; },
      },
    }) as typeof ctx;
    return apollo(view, next);
  };

  // A request without a valid token is refused before it waits for a turn (cheap: no statement); the errors
  // middleware writes it in GraphQL's shape (src/platform/errors/http.ts). (A caller whose cost budget this instance
  // knows to be spent was refused before, by the rate limits' middleware, its body unread.)
  const verify: AppMiddleware = async (ctx, next) => {
    await verifyRequest(ctx, verifier);
    return next();
  };
  // The document's text, before anything parses it; a document named by id is the manifest's (trusted-documents.ts).
  const documentSize: AppMiddleware = (ctx, next) => {
    checkDocumentSize(ctx.method === 'POST' ? (ctx.request.body as { query?: unknown } | undefined)?.query : ctx.query.query);
    return next();
  };
  // The cost budget in the RateLimit headers, beside the request quota: what was charged, or the refusal.
  const costHeaders: AppMiddleware = async (ctx, next) => {
    await next();
    const cost = ctx.state.graphqlCost;
    const state = cost?.outcome ?? cost?.refused;
    if (state) advertise(ctx, budget.quota, state.remaining, state.resetSeconds);
    if (cost?.refused) metrics.rateLimitRejections.inc({ policy: budget.quota.name });
  };
  // The caller's rights are read once the turn has come (up to GRAPHQL_QUEUE_TIMEOUT_MS later): read on arrival,
  // a queued operation would run with rights withdrawn while it waited.
  const identify: AppMiddleware = async (ctx, next) => {
    await identifyCaller(ctx, await verifiedToken(ctx, verifier), callers);
    return next();
  };
  // By id, from the front end's manifest, where trusted documents are on; in `only` mode, nothing else (trusted-documents.ts).
  const trusted = trustedDocumentsRewrite(trustedDocuments);
  const ide = config.graphql.landingPage ? createIde(config) : null;
  const idePage: AppMiddleware = (ctx, next) => (ide && isLandingPageRequest(ctx) ? ide.page(ctx, next) : next());

  const router = new Router<AppState>();
  // Apollo's middleware goes on to the next layer after answering: the method check comes first.
  router.all('/graphql', (ctx, next) => {
    if (!['GET', 'HEAD', 'POST'].includes(ctx.method)) throw new MethodNotAllowedError(ctx.method, '/graphql', ['GET', 'POST']);
    return next();
  });
  // Parsed, executed and serialized in a turn of the GraphQL class, a mutation in one of the writes', within the
  // caller's share (src/platform/http/admission.ts).
  const isMutation = mutationDetector(trustedDocuments);
  const slots = admitted(admission, (ctx) => (isMutation(ctx) ? 'graphql-write' : 'graphql'), async (ctx) => (await ctx.state.token!).sub);
  const keyed = idempotency({ ttlSeconds: config.idempotencyKeyTtlSeconds, applies: isMutation, succeeded: mutationSucceeded });
  router.post('/graphql', verify, jsonBody(), documentSize, slots, identify, trusted, keyed, costHeaders, answer);
  router.get('/graphql', idePage, verify, documentSize, slots, identify, trusted, costHeaders, answer);
  if (ide) router.get(`${IDE_ASSETS_PATH}/:build/:file`, ide.asset);
  return { router, stop: () => server.stop() };
}
