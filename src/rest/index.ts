import Router from '@koa/router';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import type { Config } from '../config';
import type { AppState } from '../http/state';
import type { TokenVerifier } from '../services/token-verifier';
import { mountRoutes } from './mount';
import { buildOpenApi } from './openapi';
import { companyRoutes } from './company.routes';
import { contractorRoutes } from './contractors.routes';
import { creditsRoutes } from './credits.routes';
import { levelingRoutes } from './leveling.routes';
import { organizationRoutes } from './organizations.routes';
import { partnerRoleRoutes } from './partner-roles.routes';
import { projectRoutes } from './projects.routes';
import type { RouteDef } from './route';
import { statisticsRoutes } from './statistics.routes';
import { templateRoutes } from './templates.routes';
import { toolRoutes } from './tools.routes';
import { tradeListRoutes } from './trade-lists.routes';
import { tradeMappingRoutes } from './trade-mapping.routes';
import { tradeRoutes } from './trades.routes';

/**
 * Every REST operation of interface.md, and the extensions beside it (leveling); within a file, specific paths
 * come before parameterised ones.
 */
export const ALL_ROUTES: RouteDef[] = [
  ...projectRoutes,
  ...statisticsRoutes,
  ...tradeRoutes,
  ...templateRoutes,
  ...organizationRoutes,
  ...contractorRoutes,
  ...tradeListRoutes,
  ...toolRoutes,
  ...partnerRoleRoutes,
  ...tradeMappingRoutes,
  ...companyRoutes,
  ...creditsRoutes,
  ...levelingRoutes,
];

const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Project Tendering Service API</title>
<link rel="stylesheet" href="/api/svc/v1/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/api/svc/v1/docs/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/api/svc/v1/openapi.json', dom_id: '#ui' });</script></body></html>`;

/** The REST operations, their OpenAPI description and a reference page served from swagger-ui-dist. */
export function restRoutes(config: Config, verifier: TokenVerifier): Router<AppState> {
  const router = mountRoutes(ALL_ROUTES, config, verifier);
  const openapi = buildOpenApi(ALL_ROUTES);
  router.get('/api/svc/v1/openapi.json', (ctx) => {
    // Changes with each release: kept by clients, revalidated through its ETag (a 304 when unchanged).
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = openapi;
  });
  router.get('/api/svc/v1/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = DOCS_HTML;
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
