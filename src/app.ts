import http from 'node:http';
import Koa from 'koa';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from './config';
import { answerClientErrors } from './http/client-error';
import { errorsMiddleware } from './http/errors.middleware';
import { requestContext } from './http/request-context.middleware';
import type { AppState } from './http/state';
import { authRoutes } from './rest/auth.routes';
import { fileRoutes } from './rest/files.routes';
import { healthRoutes } from './rest/health.routes';
import { restRoutes } from './rest';
import { TokenVerifier } from './services/token-verifier';
import { graphqlRoutes } from './graphql/server';

export interface AppDeps {
  config: Config;
  orm: MikroORM;
  log: Logger;
}

export interface App {
  koa: Koa<AppState>;
  /** Releases what the app holds besides the database (GraphQL server, key caches). */
  stop(): Promise<void>;
}

/** Builds the Koa application: middleware chain, REST routers, GraphQL, the identity provider. */
export async function createApp(deps: AppDeps): Promise<App> {
  const { config, orm, log } = deps;
  // Only the last X-Forwarded-For entry, the one the trusted proxy appended, is the client: earlier ones
  // are whatever the client sent, and would let a stolen token pass the client_ip binding.
  const koa = new Koa<AppState>({ proxy: config.trustProxy, maxIpsCount: 1 });
  koa.silent = true; // errors are logged by errorsMiddleware, under the request id
  koa.use(requestContext(orm, log));
  koa.use(errorsMiddleware());
  koa.use(healthRoutes(orm).routes());
  if (config.auth.devProvider) koa.use(authRoutes(config).routes());
  const verifier = new TokenVerifier(config);
  koa.use(restRoutes(config, verifier).routes());
  koa.use(fileRoutes(config).routes());
  const graphql = await graphqlRoutes(config, verifier);
  koa.use(graphql.router.routes());
  return {
    koa,
    stop: () => graphql.stop(),
  };
}

export interface RunningServer {
  server: http.Server;
  url: string;
  /** Stops accepting connections, lets in-flight requests finish (up to the timeout), then closes. */
  close(): Promise<void>;
}

/** Listens on host:port (port 0: an ephemeral port). */
export async function listen(app: App, host: string, port: number, shutdownTimeoutMs: number): Promise<RunningServer> {
  const server = http.createServer(app.koa.callback());
  answerClientErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    url: `http://${shownHost}:${actualPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), shutdownTimeoutMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        // Keep-alive connections with no request in flight would hold close() open.
        server.closeIdleConnections();
      }),
  };
}
