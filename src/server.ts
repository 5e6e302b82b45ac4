/** Entry point of `npm start`: database (embedded by default), demo data, HTTP server, clean shutdown. */
// First: tracing, when configured, must patch `pg` and `http` before anything loads them (docs/tracing.md).
import './platform/telemetry/preload';
import 'reflect-metadata';
import { createApp, listen } from './app';
import { ConfigError, loadConfig, readEnvFile, type Config } from './platform/config';
import { readTrustedDocuments, type TrustedDocumentsSettings } from './platform/graphql/trusted-documents';
import { openDatabase } from './platform/database/database';
import { createLogger } from './platform/logger';
import { loadDemoData } from './seed/demo-data';
import { shutDown } from './platform/shutdown';
import { stopTracing } from './platform/telemetry/tracing';
import { DATA_MODEL } from '../mikro-orm.config';

/** The configuration, and the files it names (the trusted documents' manifest): a fault in either stops here, before the database. */
function readConfig(): { config: Config; trustedDocuments: TrustedDocumentsSettings } {
  try {
    readEnvFile();
    const config = loadConfig();
    return { config, trustedDocuments: readTrustedDocuments(config.graphql.trustedDocuments) };
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const { config, trustedDocuments } = readConfig();
  const log = createLogger(config);
  const db = await openDatabase(config, DATA_MODEL, log);
  if (config.seedDemo) {
    const created = await loadDemoData(db.orm.em.fork());
    log.info(created ? 'demo data loaded' : 'demo data already present');
  }
  const app = await createApp({ config, orm: db.orm, log, database: db, trustedDocuments });
  const running = await listen(app, config.host, config.port);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return; // the sequence under way is already bounded
    stopping = true;
    log.info({ signal }, 'stop signal received');
    // Whatever a request or the database does, the process is gone at SHUTDOWN_TIMEOUT_MS.
    setTimeout(() => {
      log.error({ timeout_ms: config.shutdownTimeoutMs }, 'shutdown did not finish within SHUTDOWN_TIMEOUT_MS: exiting');
      running.server.closeAllConnections();
      log.flush(() => process.exit(1));
      // A stdout that does not drain must not keep the process either.
      setTimeout(() => process.exit(1), 100).unref();
    }, config.shutdownTimeoutMs);
    shutDown({
      lifecycle: app.lifecycle,
      running,
      log,
      graceMs: config.shutdownGraceMs,
      timeoutMs: config.shutdownTimeoutMs,
      endDatabaseWork: () => db.endBusySessions(),
      release: async () => {
        await app.stop();
        await db.close();
        // The spans of the last requests, exported before the process ends.
        await stopTracing();
      },
    }).then((answeredAll) => {
      log.info(answeredAll ? 'stopped' : 'stopped, some connections cut at SHUTDOWN_TIMEOUT_MS');
      // pino buffers stdout: exiting before the flush would lose the last lines.
      log.flush(() => process.exit(answeredAll ? 0 : 1));
    }, (err) => {
      log.error({ err }, 'shutdown failed');
      log.flush(() => process.exit(1));
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  const base = config.publicUrl;
  log.info({ url: running.url, metrics_url: running.metricsUrl }, 'listening');
  const { metrics } = config;
  if (metrics.port === null && !metrics.onMainPort) log.warn('/metrics is not served: set METRICS_PORT or METRICS_TOKEN (README, "Operate")');
  const metricsLine = running.metricsUrl ?? (metrics.onMainPort ? `${base}/metrics${metrics.token ? '  (Authorization: Bearer $METRICS_TOKEN)' : ''}` : 'not served (set METRICS_PORT or METRICS_TOKEN)');
  console.log([
    '',
    `Tender BFF is up (${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL under ${config.dataDir}/pg, port ${config.embeddedPgPort}`})`,
    `  REST API        ${base}/api/svc/v1   (reference: ${base}/api/svc/v1/docs, OpenAPI: ${base}/api/svc/v1/openapi.json)`,
    `  GraphQL         ${base}/graphql   (subscriptions: ${base.replace(/^http/, 'ws')}/graphql, graphql-ws)`,
    config.auth.devProvider ? `  Token endpoint  POST ${base}/auth/token   (JWKS: ${base}/auth/jwks)` : '  Token endpoint  external identity provider',
    config.seedDemo ? '  Demo accounts   architect@demo.test, other@demo.test, member@demo.test, noapi@demo.test  (password: demo-password)' : '',
    `  Health          ${base}/healthz  ${base}/readyz`,
    `  Metrics         ${metricsLine}`,
    '',
  ].filter(Boolean).join('\n'));
}

main().catch((err) => {
  console.error(`Tender BFF failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
