import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Config } from '../../config';
import type { AppContext, AppMiddleware } from '../../http/state';

/**
 * The GraphQL IDE a browser gets at /graphql outside production: GraphiQL 3 and React 18, from their UMD builds in
 * node_modules, under a sign-in bar of our own (browser/ide.js). Nothing on the page comes from another host: the
 * Content-Security-Policy below makes the browser refuse it, were a future version to try.
 */

/** Where the page's assets are served: `/graphql/ide/<build>/<file>`, the build id changing with their content. */
export const IDE_ASSETS_PATH = '/graphql/ide';

/** The page, its scripts and its styles may use this origin only; GraphiQL's fonts are data: URLs in its CSS. */
const PAGE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "font-src 'self' data:",
  "img-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

/**
 * The browser files, and the example documents the IDE opens with, beside this file: in src/ for the tests, and in
 * dist/ once built (`npm run build` copies them: scripts/copy-assets.js), so that a deployment of dist/ and
 * node_modules/ alone serves the IDE.
 */
const BROWSER = path.join(__dirname, 'browser');
const EXAMPLES = path.resolve(__dirname, '../../../../examples/graphql');

/**
 * The dashboard query the IDE opens with: the front end's own (examples/graphql, which codegen types) with the
 * fragments it spreads, as one runnable document. test/browser.test.ts runs the same through Apollo Client.
 */
export async function dashboardQuery(): Promise<string> {
  const parts = await Promise.all(['dashboard.graphql', 'fragments.graphql'].map((f) => readFile(path.join(EXAMPLES, f), 'utf8')));
  return parts.join('\n');
}

/**
 * The IDE's second tab: a subscription, over WebSocket (graphql-ws), that shows the dashboard's figures as
 * contractors answer (examples/graphql/ide/live-dashboard.graphql; the README shows the same, docs/subscriptions.md).
 */
export function subscriptionExample(): Promise<string> {
  return readFile(path.join(EXAMPLES, 'ide', 'live-dashboard.graphql'), 'utf8');
}

interface Asset {
  file: string;
  type: string;
}

function assets(): Map<string, Asset> {
  const packageDir = (name: string) => path.dirname(createRequire(__filename).resolve(`${name}/package.json`));
  const graphiql = packageDir('graphiql');
  return new Map(Object.entries({
    'react.production.min.js': { file: path.join(packageDir('react'), 'umd', 'react.production.min.js'), type: 'application/javascript' },
    'react-dom.production.min.js': { file: path.join(packageDir('react-dom'), 'umd', 'react-dom.production.min.js'), type: 'application/javascript' },
    'graphiql.min.js': { file: path.join(graphiql, 'graphiql.min.js'), type: 'application/javascript' },
    // graphiql.min.js names its source map by the name of the build it was copied from.
    'index.umd.js.map': { file: path.join(graphiql, 'graphiql.min.js.map'), type: 'application/json' },
    'graphiql.min.css': { file: path.join(graphiql, 'graphiql.min.css'), type: 'text/css' },
    // Subscriptions: graphql-ws's browser build (the global `graphqlWs`), the client of the service's own protocol.
    'graphql-ws.min.js': { file: path.join(packageDir('graphql-ws'), 'umd', 'graphql-ws.min.js'), type: 'application/javascript' },
    'ide.js': { file: path.join(BROWSER, 'ide.js'), type: 'application/javascript' },
    'ide.css': { file: path.join(BROWSER, 'ide.css'), type: 'text/css' },
  }));
}

interface Build {
  id: string;
  html: string;
}

function renderPage(buildId: string, config: Config, exampleQuery: string, subscription: string): string {
  const asset = (name: string) => `${IDE_ASSETS_PATH}/${buildId}/${name}`;
  const settings = {
    endpoint: '/graphql',
    tokenEndpoint: config.auth.devProvider ? '/auth/token' : null,
    clientId: config.auth.clientId,
    scope: `${config.auth.scope} email profile`,
    exampleQuery,
    subscriptionExample: subscription,
  };
  // `<` escaped: the JSON can never close its script element.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  const signIn = config.auth.devProvider
    ? `<form id="ide-sign-in" autocomplete="on">
    <input name="username" type="email" placeholder="architect@demo.test" aria-label="Username" required autocomplete="username">
    <input name="password" type="password" placeholder="password" aria-label="Password" required autocomplete="current-password">
    <button type="submit">Sign in</button>
  </form>
  <span class="ide-or">or</span>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tender BFF · GraphQL</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${asset('graphiql.min.css')}">
<link rel="stylesheet" href="${asset('ide.css')}">
</head>
<body>
<header id="ide-bar">
  <strong>Tender BFF GraphQL</strong>
  ${signIn}
  <form id="ide-token">
    <input name="token" placeholder="Paste a bearer token" aria-label="Bearer token" autocomplete="off" spellcheck="false">
    <button type="submit">Use token</button>
  </form>
  <button id="ide-sign-out" type="button" hidden>Sign out</button>
  <span id="ide-status" role="status"></span>
</header>
<main id="graphiql"></main>
<script id="ide-config" type="application/json">${json}</script>
<script src="${asset('react.production.min.js')}"></script>
<script src="${asset('react-dom.production.min.js')}"></script>
<script src="${asset('graphiql.min.js')}"></script>
<script src="${asset('graphql-ws.min.js')}"></script>
<script src="${asset('ide.js')}"></script>
</body>
</html>
`;
}

/** The IDE page and its assets. The page needs no token; every request it sends carries the one its user gives. */
export function createIde(config: Config): { page: AppMiddleware; asset: AppMiddleware } {
  const files = assets();
  let build: Promise<Build> | null = null;
  // Read once, at the first visit: a service that nobody opens in a browser never reads these files.
  const currentBuild = () => build ??= (async () => {
    const hash = createHash('sha256');
    for (const name of ['graphiql', 'react', 'react-dom', 'graphql-ws']) {
      hash.update(`${name}@${createRequire(__filename)(`${name}/package.json`).version};`);
    }
    for (const name of ['ide.js', 'ide.css']) hash.update(await readFile(files.get(name)!.file));
    const id = hash.digest('hex').slice(0, 12);
    return { id, html: renderPage(id, config, await dashboardQuery(), await subscriptionExample()) };
  })().catch((err) => {
    build = null;
    throw err;
  });

  return {
    page: async (ctx) => {
      const { html } = await currentBuild();
      ctx.type = 'html';
      ctx.set('Cache-Control', 'no-cache');
      // The same URL answers JSON to a client that asks for it.
      ctx.vary('Accept');
      ctx.set('Content-Security-Policy', PAGE_CSP);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.body = html;
    },
    asset: async (ctx, next) => {
      const { build: buildId, file: name } = (ctx as AppContext & { params: Record<string, string> }).params;
      const file = files.get(name);
      if (!file || buildId !== (await currentBuild()).id) return next();
      ctx.type = file.type;
      // The build id in the path changes whenever the content may: a browser never needs to ask again.
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = createReadStream(file.file);
    },
  };
}
