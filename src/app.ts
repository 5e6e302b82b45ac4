import http from 'node:http';
import Koa from 'koa';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from './platform/config';
import { acceptsLogin, backgroundPool, probePool } from './platform/database/pools';
import { type DatabaseRoutes } from './platform/database/database';
import { compression, conditionalGet, entityTags, serializeJsonOnce } from './platform/http/caching';
import { answerClientErrors } from './platform/http/client-error';
import { corsMiddleware } from './platform/http/cors.middleware';
import { errorsMiddleware } from './platform/errors/http';
import { closeConnectionsWhenStopping, createLifecycle, drainingServer, type Lifecycle } from './platform/http/lifecycle';
import { lingerAfterEarlyAnswers } from './platform/http/lingering-close';
import { httpMetrics, metricsRoutes, metricsServer } from './platform/http/metrics';
import { rateLimit } from './platform/http/rate-limit.middleware';
import { requestContext } from './platform/http/request-context.middleware';
import type { AppState } from './platform/http/state';
import { authRoutes } from './modules/identity/auth.routes';
import { fileRoutes } from './modules/documents/files.routes';
import { Readiness } from './platform/http/readiness';
import { healthRoutes } from './platform/http/health.routes';
import { restRoutes } from './modules/rest';
import { createRateLimiters, type RateLimiters } from './platform/http/rate-limiters';
import { sharedDownloadUrlSecret } from './modules/documents/file-url';
import { IdentityProviderService } from './modules/identity/identity-provider.service';
import { LoginThrottle } from './modules/identity/login-throttle';
import { TokenVerifier } from './platform/auth/token-verifier';
import { graphqlRoutes } from './platform/graphql/server';
import { readTrustedDocuments, type TrustedDocumentsSettings } from './platform/graphql/trusted-documents';
import { CostBudget } from './platform/graphql/cost';
import { PrimaryWatch } from './platform/database/primary-watch';
import { discardConnections } from './platform/database/limits';

/** How often an instance asks the server it writes to whether it still takes writes (docs/faults.md, "Failover"). */
const PRIMARY_WATCH_MS = 1000;
import { graphqlSchema } from './modules/schema';
import { createLoaders } from './modules/loaders';
import { ChangeFeed } from './modules/changes/feed';
import { createSubscriptionServer, type SubscriptionServer } from './modules/changes/websocket';
import { ChangeCapture } from './platform/events/change-capture';
import { decodedDatabase } from './platform/events/logical-decoding';
import { readRouting } from './platform/http/read-routing';
import { CLUSTER_SQL, ReadRouter } from './platform/database/replicas';
import { CallerCache } from './platform/auth/caller-cache';
import { Metrics } from './platform/metrics';
import { Admission, admissionLimits } from './platform/http/admission';
import { WebhookDelivery } from './modules/webhooks/delivery';

export interface AppDeps {
  config: Config;
  orm: MikroORM;
  log: Logger;
  /** How the database is reached (src/platform/database/database.ts); default: the ORM's URL, PostgreSQL itself, for everything. */
  database?: DatabaseRoutes;
  /** The trusted documents, when the entry point read their manifest already (src/server.ts, before the database); else read here. */
  trustedDocuments?: TrustedDocumentsSettings;
}

export interface App {
  koa: Koa<AppState>;
  config: Config;
  /** What /metrics exposes (src/platform/metrics.ts). */
  metrics: Metrics;
  /** The rate limits' quotas and store (src/platform/http/rate-limiters.ts). */
  limiters: RateLimiters;
  /** Set when a shutdown begins (src/platform/shutdown.ts); read by readiness and the connection middleware. */
  lifecycle: Lifecycle;
  /** GraphQL subscriptions over WebSocket: takes the HTTP server's upgrades (listen), closes its sockets. */
  subscriptions: SubscriptionServer;
  /** This instance's webhook delivery loop; null under WEBHOOK_DELIVERY=false. */
  webhooks: WebhookDelivery | null;
  /**
   * Releases what the app holds besides the database (GraphQL server, change listener, key caches, readiness
   * connection).
   */
  stop(): Promise<void>;
}

/** Builds the Koa application: middleware chain, REST routers, GraphQL, the identity provider. */
export async function createApp(deps: AppDeps): Promise<App> {
  const { config, orm, log } = deps;
  // The manifest is read once, at start, before anything else: one that does not match refuses the start (ConfigError).
  const trustedDocuments = deps.trustedDocuments ?? readTrustedDocuments(config.graphql.trustedDocuments);
  const clientUrl = orm.config.getClientUrl();
  const database = deps.database ?? { url: clientUrl, directUrl: clientUrl, sessionSettings: 'startup' };
  // A server that cannot decode changes refuses the start in one line (docs/subscriptions.md): an instance that could
  // never hear them would never be ready.
  const decoded = await decodedDatabase(database.directUrl, config.database.connectTimeoutMs);
  if (typeof decoded === 'string') throw new Error(decoded);
  // Only the last X-Forwarded-For entry, the one the trusted proxy appended, is the client: earlier ones
  // are whatever the client sent, and would let a stolen token pass the client_ip binding.
  const koa = new Koa<AppState>({ proxy: config.trustProxy, maxIpsCount: 1 });
  koa.silent = true; // errors are logged by errorsMiddleware, under the request id
  // The built-in provider's tokens are verified against its keys in process, never over HTTP from ourselves.
  const ownKeys = config.auth.devProvider ? () => new IdentityProviderService(orm.em.fork(), config).verificationKeys() : null;
  const verifier = new TokenVerifier(config, ownKeys);
  const callers = new CallerCache(config.auth.callerCacheTtlMs);
  // Counters in the service's own database unless Redis or memory is configured (docs/rate-limits.md).
  const limiters = await createRateLimiters(config.rateLimit, database.url, log, database.sessionSettings);
  // One key for every instance on this database, unless the configuration gives one.
  config.downloadUrlSecret ??= await sharedDownloadUrlSecret(orm.em.fork());
  const lifecycle = createLifecycle();
  const metrics = new Metrics();
  metrics.watchPool(orm);
  // One admission control for the work that costs, REST, GraphQL and subscription deliveries alike.
  const admission = new Admission(admissionLimits(config), metrics.admission);
  koa.use(closeConnectionsWhenStopping(lifecycle));
  koa.use(requestContext(orm, log));
  koa.use(httpMetrics(metrics));
  // Outside the errors middleware, so that every error answer (401, 429, 503) carries the CORS headers and a
  // page can read it; inside the request context, so that a preflight has its request id and access log line.
  koa.use(corsMiddleware(config.cors));
  // Compression, then 304s, then ETags, over the final body (errors included): docs/caching.md.
  koa.use(compression());
  koa.use(conditionalGet());
  koa.use(entityTags());
  koa.use(serializeJsonOnce());
  koa.use(errorsMiddleware());
  // The callers' GraphQL cost budgets: refused at the door by the rate limits, charged by the GraphQL server.
  const graphqlBudget = new CostBudget(limiters.graphqlCost);
  koa.use(rateLimit(limiters, verifier, metrics, graphqlBudget));
  // Read replicas, when configured: where read-only work goes, and read-your-writes (README, "Scale out").
  const probes = probePool(database.url, config.readinessTimeoutMs);
  const router = database.replicas?.length ? new ReadRouter({
    config: config.replicas,
    replicas: database.replicas,
    primaryLsn: async () => (await probes.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0].lsn,
    primaryCluster: async () => (await probes.query<{ id: string }>(CLUSTER_SQL)).rows[0].id,
    log,
    onPoll: (replica) => {
      metrics.replicaUsable.set({ replica: replica.name }, router!.usable(replica, null) ? 1 : 0);
      if (replica.lagMs === null || !Number.isFinite(replica.lagMs)) metrics.replicaLag.remove({ replica: replica.name });
      else metrics.replicaLag.set({ replica: replica.name }, replica.lagMs / 1000);
    },
  }) : null;
  koa.use(readRouting(router, metrics));
  // Changes by anyone, from the database's notifications, to this instance's subscribers (docs/subscriptions.md).
  const feed = new ChangeFeed(orm, config, log, metrics, admission);
  // Behind a transaction pooler, readiness's select 1 goes straight to PostgreSQL (src/platform/http/readiness.ts).
  const pooled = database.sessionSettings === 'transaction' && database.directUrl !== database.url;
  const directProbes = pooled ? probePool(database.directUrl, config.readinessTimeoutMs, 1) : null;
  const databaseAnswers = directProbes
    ? () => Promise.all([directProbes.query('select 1'), acceptsLogin(database.url, config.readinessTimeoutMs)])
    : () => probes.query('select 1');
  // Webhooks from the outbox, by every instance that delivers (docs/webhooks.md).
  const webhookPool = config.webhooks.deliver ? backgroundPool(database.url, config.database, 'webhooks') : null;
  const webhooks = webhookPool ? new WebhookDelivery(webhookPool, config.webhooks, log, metrics) : null;
  const changes = await ChangeCapture.open({
    config: config.changes,
    directUrl: database.directUrl,
    database: decoded,
    connectTimeoutMs: config.database.connectTimeoutMs,
    log,
    metrics,
    // A transactional logical message in a transaction of its own: decoded at its commit, as the writers' are.
    sendHeartbeat: async (channel, payload) => {
      await probes.query('select pg_logical_emit_message(true, $1, $2)', [channel, payload]);
    },
    consumers: {
      onEvent: (event) => feed.add(event),
      onCallerChange: (userId) => callers.forget(userId),
      onWrite: router ? (payload) => router.heardWrite(payload) : undefined,
      onWebhooksQueued: webhooks ? () => webhooks.wake() : undefined,
      // Messages may have been lost: every consumer catches up by itself.
      onGap: () => {
        feed.gap();
        callers.forget('*');
        router?.missedWrites();
        webhooks?.wake();
      },
      onHearing: (hearing) => {
        // Callers are kept only while every authorization change is heard (src/platform/auth/caller-cache.ts).
        callers.setListening(hearing);
        // Writes of other instances are known only while it hears (src/platform/database/replicas.ts).
        router?.setHearing(hearing);
        feed.setHearing(hearing);
      },
    },
  });
  // Whether the server the requests write to takes writes (a failover or switchover: docs/faults.md, "Failover").
  const primary = new PrimaryWatch({
    query: async <T,>(sql: string) => (await probes.query(sql)).rows as T[],
    intervalMs: PRIMARY_WATCH_MS,
    log,
    onChanged: () => {
      discardConnections(database.url);
      probes.renew();
      // Its replication connection may still reach the old server, which decodes nothing the requests write now.
      changes.reconnect('the primary changed');
    },
    onState: (state) => {
      metrics.dbPrimaryWritable.set(state.writable ? 1 : 0);
      // While it takes no writes the address may move at any moment: each check, and heartbeat, on a new connection.
      if (!state.writable) probes.renew();
    },
  });
  const readiness = new Readiness(databaseAnswers, config.readinessTimeoutMs, lifecycle, primary);
  koa.use(healthRoutes(readiness, admission, () => primary.state, () => changes.status()).routes());
  koa.use(metricsRoutes(metrics, config).routes());
  if (config.auth.devProvider) koa.use(authRoutes(config, new LoginThrottle(limiters.login, log)).routes());
  koa.use(restRoutes(config, verifier, callers, admission).routes());
  koa.use(fileRoutes(config).routes());
  const schema = await graphqlSchema();
  const graphql = await graphqlRoutes(config, { verifier, callers, metrics, modules: { schema, createLoaders }, admission, budget: graphqlBudget, trustedDocuments });
  koa.use(graphql.router.routes());
  const subscriptions = createSubscriptionServer({
    config, orm, log, metrics, verifier, feed, lifecycle,
    schema,
    quota: limiters.api,
    callers,
    trustedDocuments,
    // The address Koa gives HTTP requests (TRUST_PROXY, the last X-Forwarded-For entry), for the client_ip binding.
    clientIp: (request) => koa.createContext(request, new http.ServerResponse(request)).ip,
  });
  // Last: nothing above can fail and leave them running.
  await changes.start();
  await primary.check().catch(() => undefined);
  primary.start();
  await router?.start();
  webhooks?.start();
  return {
    koa,
    config,
    metrics,
    limiters,
    lifecycle,
    subscriptions,
    webhooks,
    stop: async () => {
      primary.stop();
      await graphql.stop();
      await webhooks?.stop();
      await webhookPool?.end();
      await feed.stop();
      await changes.stop();
      await router?.stop();
      await probes.end();
      await directProbes?.end();
      await limiters.stop();
    },
  };
}

export interface RunningServer {
  server: http.Server;
  url: string;
  /** The METRICS_PORT listener's /metrics URL; null when /metrics is served on the main port or not at all. */
  metricsUrl: string | null;
  /**
   * Stops accepting connections and closes the idle ones; resolves once the last connection has ended
   * (in-flight requests finish). The shutdown sequence around it is src/platform/shutdown.ts.
   */
  close(): Promise<void>;
}

/** Starts listening; resolves to the URL it listens at (port 0: an ephemeral port). */
async function listenOn(server: http.Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shownHost}:${actualPort}`;
}

// Node's close() also closes keep-alive connections that are idle at that moment.
const closeServer = (server: http.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Listens on host:port (port 0: an ephemeral port), and on METRICS_PORT when one is configured. */
export async function listen(app: App, host: string, port: number): Promise<RunningServer> {
  const server = http.createServer(app.koa.callback());
  const connections = drainingServer(server);
  lingerAfterEarlyAnswers(server);
  answerClientErrors(server);
  server.on('upgrade', (request, socket, head) => app.subscriptions.handleUpgrade(request, socket, head));
  const { metrics: metricsConfig } = app.config;
  const scrapes = metricsConfig.port === null ? null : metricsServer(app.metrics, metricsConfig.token);
  const metricsUrl = scrapes ? `${await listenOn(scrapes, metricsConfig.host, metricsConfig.port!)}/metrics` : null;
  let url: string;
  try {
    url = await listenOn(server, host, port);
  } catch (err) {
    if (scrapes) await closeServer(scrapes);
    throw err;
  }
  return {
    server,
    url,
    metricsUrl,
    // Scrapes go on while the service drains; the metrics listener closes with it. WebSocket connections are
    // the server's connections too: they are closed first (clients reconnect elsewhere).
    close: async () => {
      await Promise.all([app.subscriptions.close(), connections.drain()]);
      if (scrapes) await closeServer(scrapes);
    },
  };
}
