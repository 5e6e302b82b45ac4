import { getIntrospectionQuery } from 'graphql';
import { dashboardQuery, subscriptionExample } from '../src/platform/graphql/ide';
import { startAppOn, startTestApp, type TestApp } from './support/app';
import { tokenFor } from './support/auth';
import { gql } from './support/graphql';
import { request } from './support/http';
import { queryRows } from './support/databases';
import { eventually, subscribe, wsClient } from './support/subscriptions';
import { DEMO_IDS } from '../src/seed/demo-data';

// The GraphQL IDE served at /graphql to a browser outside production (issue 9, docs/decisions.md "Browsers"):
// from this service only, with a sign-in bar and the dashboard query; introspection still needs a token.
// test/browser.test.ts renders it in Chromium; this file checks what the service sends.

let t: TestApp;
let architect: string;

beforeAll(async () => {
  t = await startTestApp();
  architect = await tokenFor(t.url, 'architect@demo.test');
});
afterAll(() => t.close());

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const openInBrowser = (url: string) => request(url, 'GET', '/graphql', { headers: { Accept: BROWSER_ACCEPT } });

/** The URLs the page's own elements load (script src, stylesheet and icon href). */
const pageUrls = (html: string) => [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]);

/** The settings the page hands its script. */
const pageSettings = (html: string) => JSON.parse(/<script id="ide-config" type="application\/json">(.*?)<\/script>/s.exec(html)![1]);

/**
 * Hosts named in the served scripts that no code fetches: XML namespaces (www.w3.org) and links in messages and
 * help texts (React's error decoder, GraphiQL's help). The browser test checks that no request leaves anyway.
 */
const NEVER_FETCHED_HOSTS = ['www.w3.org', 'github.com', 'en.wikipedia.org', 'commonmark.org', 'codemirror.net', 'reactjs.org'];

describe('GET /graphql in a browser: the IDE page, from this service only', () => {
  it('serves the page without a token, loading its scripts and styles from /graphql/ide/<build>/ and nowhere else', async () => {
    const res = await openInBrowser(t.url);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect([res.headers.get('cache-control'), res.headers.get('vary')?.toLowerCase()]).toEqual(['no-cache', expect.stringContaining('accept')]);
    const urls = pageUrls(res.text);
    expect(urls).toEqual(expect.arrayContaining([expect.stringMatching(/^\/graphql\/ide\/[0-9a-f]{12}\/graphiql\.min\.js$/)]));
    for (const url of urls) expect(url).toMatch(/^(\/graphql\/ide\/[0-9a-f]{12}\/[a-z.-]+|data:,)$/);
    expect(res.text).not.toMatch(/https?:|["'(=]\/\//);
  });

  it('forbids the page any other origin with its Content-Security-Policy', async () => {
    const csp = (await openInBrowser(t.url)).headers.get('content-security-policy');
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "font-src 'self' data:", "frame-ancestors 'none'"]) {
      expect(csp).toContain(directive);
    }
  });

  it('serves each asset with a long immutable cache, and none of them loads anything from another host', async () => {
    const urls = pageUrls((await openInBrowser(t.url)).text).filter((url) => url.startsWith('/graphql/ide/'));
    expect(urls.map((url) => url.split('/').pop()).sort()).toEqual(['graphiql.min.css', 'graphiql.min.js', 'graphql-ws.min.js', 'ide.css', 'ide.js', 'react-dom.production.min.js', 'react.production.min.js']);
    for (const url of urls) {
      const res = await request(t.url, 'GET', url);
      expect([url, res.status, res.headers.get('cache-control')]).toEqual([url, 200, 'public, max-age=31536000, immutable']);
      expect(res.headers.get('content-type')).toMatch(url.endsWith('.css') ? /^text\/css/ : /^application\/javascript/);
      const hosts = [...res.text.matchAll(/(?:https?:)?\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)+)/gi)].map((m) => m[1].toLowerCase());
      expect([url, hosts.filter((host) => !NEVER_FETCHED_HOSTS.includes(host))]).toEqual([url, []]);
      if (url.endsWith('.css')) {
        expect(res.text).not.toMatch(/@import/);
        // GraphiQL's fonts are inlined: every url() of its stylesheet is a data: URL.
        for (const [, target] of res.text.matchAll(/url\(\s*["']?([^"')]*)/g)) expect(target).toMatch(/^data:/);
      }
    }
  });

  it('answers 404 to an unknown file, an unknown build, and a name of a built-in property', async () => {
    const build = /\/graphql\/ide\/([0-9a-f]{12})\//.exec((await openInBrowser(t.url)).text)![1];
    for (const path of [`/graphql/ide/${build}/package.json`, `/graphql/ide/${build}/constructor`, '/graphql/ide/000000000000/ide.js', `/graphql/ide/${build}/..%2F..%2Fpackage.json`]) {
      const res = await request(t.url, 'GET', path);
      expect([path, res.status]).toEqual([path, 404]);
    }
  });
});

describe('The IDE page: sign-in with the development provider, a bearer token, the dashboard query', () => {
  it('opens with the dashboard query of examples/graphql/dashboard.graphql, and signs in through /auth/token', async () => {
    const html = (await openInBrowser(t.url)).text;
    expect(pageSettings(html)).toEqual({
      endpoint: '/graphql', tokenEndpoint: '/auth/token', clientId: 'svc-api', scope: 'svc email profile',
      exampleQuery: await dashboardQuery(), subscriptionExample: await subscriptionExample(),
    });
    expect(html).toContain('<form id="ide-sign-in"');
    expect(html).toContain('<form id="ide-token">');
  });

  it('offers only the token field when the development identity provider is off', async () => {
    const noProvider = await startAppOn(t.orm.config.getClientUrl(), { AUTH_DEV_PROVIDER: 'false', AUTH_JWKS_URL: `${t.url}/auth/jwks` });
    try {
      const html = (await openInBrowser(noProvider.url)).text;
      expect(pageSettings(html).tokenEndpoint).toBeNull();
      expect(html).not.toContain('ide-sign-in');
      expect(html).toContain('<form id="ide-token">');
    } finally {
      await noProvider.close();
    }
  });

  it('runs the subscription example of its second tab over WebSocket', async () => {
    const c = wsClient(t.url, architect);
    try {
      const sub = subscribe<{ projectChanged: { changes: string[]; project: { statistics: { answered: number } } } }>(c.client, await subscriptionExample(), { projectIds: [DEMO_IDS.projects.school] });
      await eventually(async () => (await t.app.metrics.subscriptionsActive.get()).values.some((v) => v.value === 1), 'subscribed');
      await queryRows(t.databaseUrl, `update document set intention = 'MAYBE' where id = $1`, [DEMO_IDS.documents.schoolDemolitionPetit]);
      const update = await sub.next();
      expect(update.errors).toBeUndefined();
      expect(update.data!.projectChanged.changes).toEqual(['DOCUMENT']);
      expect(update.data!.projectChanged.project.statistics.answered).toEqual(expect.any(Number));
    } finally {
      await c.dispose();
    }
  });

  it('runs the dashboard query it opens with', async () => {
    const res = await gql(t.url, architect, await dashboardQuery());
    expect([res.status, res.body.errors]).toEqual([200, undefined]);
    expect(res.body.data.projects.totalCount).toBeGreaterThan(0);
    expect(res.body.data.projects.nodes[0].templates.length).toBeGreaterThan(0);
  });
});

describe('Introspection stays behind the token', () => {
  it('answers the schema query of the IDE 401 without a token, and the schema with one', async () => {
    const anonymous = await gql(t.url, undefined, getIntrospectionQuery());
    expect([anonymous.status, anonymous.body.errors[0].extensions.code, anonymous.body.data]).toEqual([401, 'UNAUTHENTICATED', undefined]);
    const signedIn = await gql(t.url, architect, getIntrospectionQuery());
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.__schema.types.map((type: { name: string }) => type.name)).toContain('Project');
  });
});

describe('No IDE where the landing page is off (production)', () => {
  it('answers a browser at /graphql 401 in GraphQL shape and serves no IDE asset', async () => {
    const build = /\/graphql\/ide\/([0-9a-f]{12})\//.exec((await openInBrowser(t.url)).text)![1];
    const off = await startAppOn(t.orm.config.getClientUrl(), { GRAPHQL_LANDING_PAGE: 'false' });
    try {
      const page = await openInBrowser(off.url);
      expect([page.status, page.body.errors?.[0]?.extensions?.code]).toEqual([401, 'UNAUTHENTICATED']);
      expect((await request(off.url, 'GET', `/graphql/ide/${build}/graphiql.min.js`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
