import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  GraphQLError, createSourceEventStream, execute, getOperationAST, parse, specifiedRules, validate,
  type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, type ValidationRule,
} from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../../platform/config';
import { GraphQLLimitError, TrustedDocumentError, ValidationError } from '../../platform/errors/errors';
import { toAppError } from '../../platform/errors/database-faults';
import { trustedDocumentOf, type RequestedDocument, type TrustedDocumentsSettings } from '../../platform/graphql/trusted-documents';
import { CLOSE, closingOf } from '../../platform/errors/websocket';
import type { Lifecycle } from '../../platform/http/lifecycle';
import type { Metrics } from '../../platform/metrics';
import type { Quota } from '../../platform/http/rate-limiters';
import { subjectKey } from '../../platform/http/rate-limit.middleware';
import type { CallerCache } from '../../platform/auth/caller-cache';
import { loadCaller } from '../../platform/auth/caller.service';
import type { TokenVerifier, VerifiedToken } from '../../platform/auth/token-verifier';
import type { ServiceContext } from '../../platform/service-context';
import { classifyGraphQLError, graphqlErrorFormatter, requestError } from '../../platform/errors/graphql';
import { checkDocumentSize, GRAPHQL_LIMITS, limitError, limitRules } from '../../platform/graphql/limits';
import { requestedCost } from '../../platform/graphql/cost';
import { watchSlowReaders } from './slow-readers';
import type { ChangeFeed, SubscriberConnection, Update } from './feed';

/**
 * What a subscription's `subscribe` gets: the connection's caller, the feed to register with. Kept for the life of
 * the subscription, so it holds no entity manager of its own: `serviceContext()` makes one for the start's checks.
 */
export interface SubscriptionContext {
  feed: ChangeFeed;
  connection: SubscriberConnection;
  serviceContext(): ServiceContext;
}


/** The longest a timer may wait in Node (24.8 days); a token valid for longer is closed then, and reconnects. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A WebSocket message holds one GraphQL operation: the HTTP body's bound is far above what that needs. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/** A close reason is at most 123 bytes. */
const reason = (text: string) => (Buffer.byteLength(text) <= 123 ? text : `${Buffer.from(text).subarray(0, 120).toString().replace(/\uFFFD+$/, '')}...`);

/** Per connection: who, and what ends with it. */
interface ConnectionState {
  connection: SubscriberConnection;
  token: VerifiedToken;
  openedAt: number;
  expiry: NodeJS.Timeout;
}

type Extra = { socket: WebSocket; request: IncomingMessage; state?: ConnectionState };
type Params = Record<string, unknown> | undefined;
type Ctx = WsContext<Params, Extra>;

export interface SubscriptionServerDeps {
  config: Config;
  orm: MikroORM;
  log: Logger;
  metrics: Metrics;
  verifier: TokenVerifier;
  feed: ChangeFeed;
  lifecycle: Lifecycle;
  schema: GraphQLSchema;
  /** Requests per caller: opening a connection counts as one, under the key HTTP requests count under. */
  quota: Quota;
  /** The callers HTTP requests keep (src/platform/auth/caller-cache.ts): a connection's caller is found alike. */
  callers: CallerCache;
  /** The client address of a request, as Koa computes it for HTTP (TRUST_PROXY). */
  clientIp(request: IncomingMessage): string;
  /** The front end's trusted documents, as HTTP serves them (src/platform/graphql/trusted-documents.ts). */
  trustedDocuments: TrustedDocumentsSettings;
}

export interface SubscriptionServer {
  /** Takes over an HTTP upgrade request (the http server's 'upgrade' event). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every connection (1001 Going Away: clients reconnect, to another instance), waits for them to end. */
  close(): Promise<void>;
}

/** Refuses an upgrade with a plain HTTP answer. */
function refuseUpgrade(socket: Duplex, status: string, headers: Record<string, string> = {}): void {
  const lines = [`HTTP/1.1 ${status}`, 'Connection: close', 'Content-Length: 0', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.end(`${lines.join('\r\n')}\r\n\r\n`);
}

/** The token graphql-ws clients send in `connection_init`: `{ "Authorization": "Bearer <token>" }`, any case. */
function authorizationOf(params: Record<string, unknown> | undefined): string | undefined {
  const entry = Object.entries(params ?? {}).find(([name]) => name.toLowerCase() === 'authorization');
  return typeof entry?.[1] === 'string' ? entry[1] : undefined;
}

/**
 * Results of one update's payload by document, operation and variables: subscribers of one group who subscribed
 * with the same operation get the same change in the same context (feed.ts), hence the same result, executed once.
 */
const sharedResults = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();

/** An update's payload, resolved in the update's own context (feed.ts): graphql-js's subscribe, with a context per event. */
function subscribeWithUpdateContexts(args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const operationKey = JSON.stringify([args.document.loc?.source.body ?? null, args.operationName ?? null, args.variableValues ?? null]);
  const resultOf = (update: Update): Promise<ExecutionResult> => {
    let byOperation = sharedResults.get(update.change);
    if (!byOperation) {
      byOperation = new Map();
      sharedResults.set(update.change, byOperation);
    }
    let result = byOperation.get(operationKey);
    if (!result || args.document.loc === undefined) {
      result = Promise.resolve(execute({ ...args, rootValue: update.change, contextValue: update.context }));
      byOperation.set(operationKey, result);
    }
    return result;
  };
  return createSourceEventStream(args).then((stream) => {
    if (!(Symbol.asyncIterator in Object(stream))) return stream as ExecutionResult;
    const updates = (stream as AsyncIterable<Update>)[Symbol.asyncIterator]();
    // Not an async generator: its return() would wait for a pending next(), i.e. the next update.
    const results: AsyncIterableIterator<ExecutionResult> = {
      next: async () => {
        const { value, done } = await updates.next();
        if (done) return { value: undefined, done: true };
        return { value: await resultOf(value), done: false };
      },
      return: async () => {
        await updates.return?.();
        return { value: undefined, done: true };
      },
      throw: async (err) => {
        await updates.return?.();
        throw err;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return results;
  });
}

/**
 * GraphQL subscriptions over WebSocket on the HTTP port, path /graphql, in the graphql-ws protocol
 * (`graphql-transport-ws`, what Apollo Client's GraphQLWsLink and urql speak). docs/subscriptions.md:
 *
 * - `connection_init` carries `{ "Authorization": "Bearer <token>" }`, verified as on HTTP (issuer, audience,
 *   scope, client_ip binding against the upgrade request's address, the Administrator rule). Refusals close the
 *   socket: 4401 (token refused, do not retry it), 4403 (forbidden; also when the token expires, so that clients
 *   reconnect with a fresh one), 4429 (too many connections or requests), 1013 (database or identity provider
 *   unavailable: retry), 4503 (the client does not read what is sent to it: slow-readers.ts).
 * - Only subscriptions: queries and mutations go over HTTP. Documents pass the same limits as on HTTP.
 * - At most SUBSCRIPTIONS_MAX_PER_CONNECTION subscriptions per connection, SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CALLER
 *   connections per caller on this instance.
 */
export function createSubscriptionServer(deps: SubscriptionServerDeps): SubscriptionServer {
  const { config, orm, log, metrics, verifier, feed, lifecycle, schema } = deps;
  const limits = config.subscriptions;
  // The limits of HTTP's GraphQL, applied alike (src/platform/graphql/limits.ts); cost once the variables are known.
  const rules: readonly ValidationRule[] = [...specifiedRules, ...limitRules()];
  const formatError = graphqlErrorFormatter({ hideSuggestions: !config.graphql.introspection });
  const connectionsByCaller = new Map<string, number>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  let closing: Promise<void> | null = null;
  const readers = watchSlowReaders(wss, limits, (ws, bound, message) => {
    metrics.subscriptionSlowReaders.inc({ bound });
    ws.close(CLOSE.slowReader, reason(message));
    // Its close frame waits behind what it has not read: one more interval to read it, then the connection is cut.
    setTimeout(() => ws.terminate(), limits.sendTimeoutMs).unref();
  });

  const refuse = (ctx: Ctx, code: number, message: string, why: string): false => {
    metrics.subscriptionRefusals.inc({ reason: why });
    ctx.extra.socket.close(code, reason(message));
    return false;
  };

  /** Who connects: the token, then the caller; false (the socket closed with the reason) when refused. */
  const onConnect = async (ctx: Ctx): Promise<boolean> => {
    const ip = deps.clientIp(ctx.extra.request);
    let token: VerifiedToken | null = null;
    try {
      token = await verifier.verify(authorizationOf(ctx.connectionParams), ip);
      await deps.quota.limiter.consume(subjectKey(token.sub));
      const caller = await deps.callers.get(token.sub, () => loadCaller(orm.em.fork(), token!));
      const open = connectionsByCaller.get(caller.userId) ?? 0;
      if (open >= limits.maxConnectionsPerCaller) {
        return refuse(ctx, CLOSE.tooMany, `Too many subscription connections for this caller (at most ${limits.maxConnectionsPerCaller})`, 'connection_limit');
      }
      connectionsByCaller.set(caller.userId, open + 1);
      metrics.subscriptionConnections.inc();
      const socket = ctx.extra.socket;
      const expiresInMs = Number(token.payload.exp) * 1000 + config.auth.clockToleranceSeconds * 1000 - Date.now();
      ctx.extra.state = {
        connection: { caller, close: (code, text) => socket.close(code, reason(text)) },
        token,
        openedAt: Date.now(),
        // The token is as good as on HTTP until then; a client reconnects with a fresh one (4403 is retried).
        expiry: setTimeout(() => refuse(ctx, CLOSE.forbidden, 'The token has expired: connect again with a fresh token', 'token_expired'),
          Math.max(0, Math.min(expiresInMs, MAX_TIMER_MS))),
      };
      return true;
    } catch (err) {
      const closing = closingOf(err);
      if (closing.log === 'warn') log.warn({ err: (toAppError(err)?.cause ?? err) }, 'subscription connection refused: try again later');
      if (closing.log === 'error') log.error({ err }, 'subscription connection failed');
      return refuse(ctx, closing.code, closing.message, closing.why);
    }
  };

  /** GraphQL's shape of our errors, as on HTTP (one mapping: src/platform/errors/graphql.ts). */
  const shape = (errors: readonly GraphQLError[]) => errors.map((error) => {
    if (classifyGraphQLError(error).kind === 'fault') log.error({ err: error.originalError ?? error, path: error.path }, 'unexpected GraphQL error in a subscription');
    return formatError(error.toJSON(), error);
  });

  /** A subscription refused before it runs: the caller's request, BAD_USER_INPUT as every GraphQL limit. */
  const refusal = (message: string) => [new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } })];

  const server = useServer<Params, { state: ConnectionState }>({
    schema,
    onConnect,
    onSubscribe: (ctx, _id, payload) => {
      const state = ctx.extra.state!;
      let document: DocumentNode;
      let query: string;
      try {
        // By id, from the front end's manifest, where trusted documents are on (src/platform/graphql/trusted-documents.ts).
        query = trustedDocumentOf(deps.trustedDocuments, payload as RequestedDocument, state.connection.caller.email) ?? payload.query;
      } catch (err) {
        if (err instanceof TrustedDocumentError) return [new GraphQLError(err.message, { originalError: err })];
        throw err;
      }
      // Parse and validation errors are the caller's, coded as over HTTP (a limit by its own code).
      try {
        checkDocumentSize(query);
        document = parse(query, { maxTokens: GRAPHQL_LIMITS.maxTokens });
      } catch (err) {
        if (err instanceof GraphQLLimitError) return [limitError(err.code, err.message)];
        return [requestError(err, 'GRAPHQL_PARSE_FAILED')];
      }
      let invalid: readonly GraphQLError[];
      try {
        invalid = validate(schema, document, rules);
      } catch (err) {
        // graphql-js's SingleFieldSubscriptionsRule evaluates the root fields' `@include`/`@skip` with no variables
        // and throws on one that names a variable (which the spec no longer allows there): the caller's document.
        if (!(err instanceof GraphQLError)) throw err;
        return refusal(`The root field of a subscription cannot depend on a variable (@include, @skip): ${err.message}`);
      }
      if (invalid.length) return invalid.map((e) => requestError(e, 'GRAPHQL_VALIDATION_FAILED'));
      const operation = getOperationAST(document, payload.operationName);
      if (!operation) return refusal('The document must hold one operation, or operationName must name one of them');
      if (operation.operation !== 'subscription') {
        return refusal(`Only subscriptions are served over WebSocket: send a ${operation.operation} to /graphql over HTTP`);
      }
      let cost: number | null;
      try {
        cost = requestedCost(schema, document, payload.operationName ?? undefined, payload.variables ?? undefined);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        return [new GraphQLError(err.message, { originalError: err })];
      }
      if (cost !== null && cost > GRAPHQL_LIMITS.maxCost) {
        return [limitError('COST_LIMIT', `The operation's requested cost is ${cost}, over the limit of ${GRAPHQL_LIMITS.maxCost}: ask for fewer fields`)];
      }
      if (Object.keys(ctx.subscriptions).length > limits.maxPerConnection) {
        metrics.subscriptionRefusals.inc({ reason: 'subscription_limit' });
        return refusal(`Too many subscriptions on this connection (at most ${limits.maxPerConnection}): complete one first`);
      }
      const contextValue: SubscriptionContext = {
        feed,
        connection: state.connection,
        serviceContext: () => ({ em: orm.em.fork(), caller: state.connection.caller, config }),
      };
      return { schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue };
    },
    subscribe: subscribeWithUpdateContexts,
    onNext: (ctx, _id, _payload, _args, result) => {
      // Over its bound the connection closes here, and graphql-ws sends nothing more to a socket no longer open.
      readers.check(ctx.extra.socket);
      return result.errors?.length ? { ...result, errors: shape(result.errors as GraphQLError[]) } : undefined;
    },
    onError: (_ctx, _id, _payload, errors) => shape(errors),
    onClose: (ctx, code) => {
      const state = ctx.extra.state;
      if (!state) return;
      clearTimeout(state.expiry);
      const userId = state.connection.caller.userId;
      const open = (connectionsByCaller.get(userId) ?? 1) - 1;
      if (open > 0) connectionsByCaller.set(userId, open);
      else connectionsByCaller.delete(userId);
      metrics.subscriptionConnections.dec();
      log.info({ user_id: userId, code, duration_ms: Date.now() - state.openedAt }, 'subscription connection closed');
    },
  }, wss, 0); // graphql-ws's keep-alive off: the slow readers' watch pings (slow-readers.ts)

  return {
    handleUpgrade(request, socket, head) {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (path !== '/graphql') return refuseUpgrade(socket, '404 Not Found');
      // The balancer is taking this instance out: a new connection belongs on another one.
      if (lifecycle.shuttingDown) return refuseUpgrade(socket, '503 Service Unavailable', { 'Retry-After': '5' });
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
    },
    close() {
      // Once: a shutdown and a test's teardown may both ask.
      closing ??= (async () => {
        readers.stop();
        const sockets = [...wss.clients];
        const closed = Promise.all(sockets.map((ws) => new Promise<void>((resolve) => {
          if (ws.readyState === ws.CLOSED) return resolve();
          ws.once('close', () => resolve());
        })));
        for (const ws of sockets) ws.close(CLOSE.goingAway, 'The server is shutting down');
        // A client that does not answer the close frame is cut.
        const cut = setTimeout(() => sockets.forEach((ws) => ws.terminate()), 1000);
        await closed;
        clearTimeout(cut);
        await server.dispose();
      })();
      return closing;
    },
  };
}
