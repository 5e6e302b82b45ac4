import Router from '@koa/router';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import type { Config } from '../platform/config';
import type { AppState } from '../platform/http/state';
import type { TokenVerifier } from '../platform/auth/token-verifier';
import type { CallerCache } from '../platform/auth/caller-cache';
import { mountRoutes } from '../platform/rest/mount';
import type { Admission } from '../platform/http/admission';
import { buildOpenApi } from '../platform/rest/openapi';
import { TOKEN_COMPONENTS, tokenPath } from './identity/token.openapi';
import { COMPANY_SCHEMAS, companyRoutes } from './companies/company.routes';
import { contractorRoutes } from './contractors/contractors.routes';
import { creditsRoutes } from './invitations/credits.routes';
import { levelingRoutes } from './leveling/leveling.routes';
import { organizationRoutes } from './organizations/organizations.routes';
import { partnerRoleRoutes } from './partner-roles/partner-roles.routes';
import { projectRoutes } from './projects/projects.routes';
import type { RouteDef } from '../platform/rest/route';
import { statisticsRoutes } from './statistics/statistics.routes';
import { templateRoutes } from './templates/templates.routes';
import { invitationRoutes } from './invitations/invitations.routes';
import { documentRoutes } from './documents/documents.routes';
import { toolRoutes } from './tools/tools.routes';
import { tradeListRoutes } from './trades/trade-lists.routes';
import { tradeMappingRoutes } from './trades/trade-mapping.routes';
import { tradeRoutes } from './trades/trades.routes';
import { webhookRoutes } from './webhooks/webhooks.routes';

/**
 * Every REST operation of the published interface document (interface.md, kept outside this repository), and the
 * extensions beside it (leveling); within a file, specific paths come before parameterised ones.
 */
export const ALL_ROUTES: RouteDef[] = [
  ...projectRoutes,
  ...statisticsRoutes,
  ...tradeRoutes,
  ...templateRoutes,
  ...invitationRoutes,
  ...documentRoutes,
  ...organizationRoutes,
  ...contractorRoutes,
  ...tradeListRoutes,
  ...toolRoutes,
  ...partnerRoleRoutes,
  ...tradeMappingRoutes,
  ...companyRoutes,
  ...creditsRoutes,
  ...levelingRoutes,
  ...webhookRoutes,
];

/** The reference page; "Authorize" fills in the client and the scopes the token endpoint expects. */
const docsHtml = (config: Config) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Project Tendering Service API</title>
<link rel="stylesheet" href="/api/svc/v1/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/api/svc/v1/docs/swagger-ui-bundle.js"></script>
<script>const ui = SwaggerUIBundle({ url: '/api/svc/v1/openapi.json', dom_id: '#ui', persistAuthorization: false });
ui.initOAuth(${JSON.stringify({ clientId: config.auth.clientId, scopes: `${config.auth.scope} email profile` })});</script></body></html>`;

/**
 * The OpenAPI description of every REST operation under a configuration (the token endpoint of its identity
 * provider); openapi.json holds it under the defaults.
 */
export function openApiDocument(config: Pick<Config, 'auth' | 'idempotencyKeyTtlSeconds'>) {
  const tokenEndpoint = config.auth.devProvider;
  return buildOpenApi(ALL_ROUTES, {
    tokenUrl: config.auth.tokenUrl ?? '/auth/token',
    scope: config.auth.scope,
    tokenEndpoint,
    idempotencyKeyTtlSeconds: config.idempotencyKeyTtlSeconds,
    paths: tokenEndpoint ? { '/auth/token': tokenPath(config.auth.scope) } : {},
    schemas: { ...COMPANY_SCHEMAS, ...(tokenEndpoint ? TOKEN_COMPONENTS : {}) },
  });
}

/** The REST operations, their OpenAPI description and a reference page served from swagger-ui-dist. */
export function restRoutes(config: Config, verifier: TokenVerifier, callers: CallerCache, admission: Admission): Router<AppState> {
  const router = mountRoutes(ALL_ROUTES, config, verifier, callers, admission);
  const openapi = openApiDocument(config);
  const docs = docsHtml(config);
  router.get('/api/svc/v1/openapi.json', (ctx) => {
    // Changes with each release: kept by clients, revalidated through its ETag (a 304 when unchanged).
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = openapi;
  });
  router.get('/api/svc/v1/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = docs;
  });
  const uiDir = path.dirname(createRequire(__filename).resolve('swagger-ui-dist/package.json'));
  // A Map, not an object literal: the name comes from the URL, and `constructor` or `__proto__` would find
  // what every object inherits.
  const assets = new Map([['swagger-ui.css', 'text/css'], ['swagger-ui-bundle.js', 'application/javascript']]);
  router.get('/api/svc/v1/docs/:asset', (ctx) => {
    const type = assets.get(ctx.params.asset);
    if (!type) return;
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    // Streamed from disk: its ETag comes from the file's size and time, without reading it.
    ctx.body = createReadStream(path.join(uiDir, ctx.params.asset));
  });
  return router;
}
