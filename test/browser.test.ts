import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { dashboardQuery } from '../src/platform/graphql/ide';
import { DEMO_IDS, DEMO_PASSWORD } from '../src/seed/demo-data';
import { queryRows } from './support/databases';
import { startTestApp, type TestApp } from './support/app';
import type { ScenarioInput, ScenarioResult } from './browser/apollo-page';
import { bundle, chromiumMissing, launchChromium, servePage } from './browser/support';

// The service as a browser front end uses it (issue 9): headless Chromium on a page of another origin, with
// Apollo Client; then the GraphQL IDE at /graphql, with no internet. Screenshots go to test-artifacts/.

const ARTIFACTS = path.join(__dirname, '..', 'test-artifacts');
const PAGE_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Front end</title>
<link rel="icon" href="data:,"></head>
<body><h1>A front end on another origin</h1><pre id="out">running...</pre><script src="/app.js"></script></body></html>`;

const missing = chromiumMissing();
// An allowed skip (a part of the machine that .ci/run could not install): a machine where no browser could be installed (.ci/run says why it could not).
if (missing) console.warn(`SKIPPED browser test (test/browser.test.ts): ${missing}`);
const describeInChromium = missing ? describe.skip : describe;

describeInChromium('A front end in Chromium, on another origin, through CORS and Apollo Client', () => {
  let t: TestApp;
  let site: Awaited<ReturnType<typeof servePage>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let context: BrowserContext;
  /** Every request the browser made, from either page. */
  const requests: string[] = [];
  /** The service's access log: method, path and status of every request it answered, preflights included. */
  const served: string[] = [];
  let dashboard: string;

  beforeAll(async () => {
    const [script] = await Promise.all([
      bundle(path.join(__dirname, 'browser', 'apollo-page.ts')),
      mkdir(ARTIFACTS, { recursive: true }),
    ]);
    dashboard = await dashboardQuery();
    site = await servePage(PAGE_HTML, script);
    t = await startTestApp({ LOG_LEVEL: 'info', CORS_ORIGINS: site.url }, undefined, {
      logTo: {
        write: (line) => {
          const entry = JSON.parse(line);
          if (entry.msg === 'request') served.push(`${entry.method} ${entry.path} ${entry.status}`);
        },
      },
    });
    browser = await launchChromium();
    context = browser.context;
    context.on('request', (request) => {
      requests.push(`${request.method()} ${request.url()}`);
    });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await t?.close();
  });

  /**
   * Console errors and warnings of a page (a CSP refusal, an Apollo Client warning), but the 401s it was meant to
   * get: a call without a token, and the IDE's introspection before its user signs in.
   */
  function consoleProblems(page: Page): string[] {
    const problems: string[] = [];
    page.on('console', (message: ConsoleMessage) => {
      if (!['error', 'warning'].includes(message.type()) || /status of 401 \(Unauthorized\)$/.test(message.text())) return;
      problems.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (err) => problems.push(err.message));
    return problems;
  }

  it('signs in through /auth/token, runs the dashboard query and a mutation through Apollo Client, and reads REST and error answers', async () => {
    const page = await context.newPage();
    const problems = consoleProblems(page);
    await page.goto(site.url);
    const input: ScenarioInput = { service: t.url, username: 'architect@demo.test', password: DEMO_PASSWORD, dashboardQuery: dashboard };
    const result = await page.evaluate((i) => (globalThis as unknown as { runScenario(i: ScenarioInput): Promise<ScenarioResult> }).runScenario(i), input);
    await page.screenshot({ path: path.join(ARTIFACTS, 'browser-front-end.png'), fullPage: true });

    expect(result.unauthenticated).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
    expect(result.signIn).toEqual({ status: 200, requestIdSent: result.signIn.requestIdSent, requestIdRead: result.signIn.requestIdSent, tokenType: 'Bearer' });
    expect(result.dashboard).toMatchObject({ errors: 0, projects: expect.arrayContaining(['Résidence Les Tilleuls – 42 logements']) });
    expect(result.dashboard.totalCount).toBe(result.dashboard.projects.length);
    expect(result.dashboard.templates).toBeGreaterThan(0);
    expect(result.dashboard.documents).toBeGreaterThan(0);
    expect(result.mutation).toEqual({ typename: 'ProjectTrade', id: expect.any(String), name: expect.stringMatching(/^Browser trade /), cachedName: result.mutation.name });
    expect(result.rest).toEqual({ status: 200, tradeListed: true });
    // The browser preflighted what a page may not send unasked: JSON bodies, Authorization, X-Request-Id.
    expect(served).toEqual(expect.arrayContaining(['OPTIONS /graphql 204', 'OPTIONS /auth/token 204', expect.stringMatching(/^OPTIONS \/api\/svc\/v1\/projects\/[0-9a-f-]+\/trades 204$/)]));
    expect(problems).toEqual([]);
  });

  it('serves the GraphQL IDE at /graphql that signs in, shows the schema docs and runs the dashboard query, with every request on a local origin', async () => {
    const page = await context.newPage();
    const problems = consoleProblems(page);
    await page.goto(`${t.url}/graphql`);
    await page.locator('.graphiql-container').waitFor();
    expect(await page.locator('.graphiql-query-editor').innerText()).toContain('query Dashboard');
    await expect(page.locator('#ide-status').innerText()).resolves.toMatch(/^Not signed in/);

    await page.fill('#ide-sign-in input[name="username"]', 'architect@demo.test');
    await page.fill('#ide-sign-in input[name="password"]', DEMO_PASSWORD);
    await page.click('#ide-sign-in button[type="submit"]');
    await page.getByText('Authorization: Bearer token of architect@demo.test').waitFor();

    // The schema came by introspection, with the token: the docs list the types.
    await page.click('button[aria-label="Show Documentation Explorer"]');
    const docs = page.locator('.graphiql-doc-explorer');
    await docs.getByText('Project', { exact: true }).first().click();
    await docs.getByText('templates', { exact: true }).first().waitFor();

    await page.click('.graphiql-execute-button');
    await page.locator('.graphiql-response').getByText('"totalCount"').waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'graphql-ide.png') });

    // The second tab's subscription, over WebSocket: an answer written to the database shows up in the response.
    await page.locator('.graphiql-tab', { hasText: 'DashboardChanges' }).click();
    await page.click('.graphiql-execute-button');
    await page.locator('.graphiql-execute-button[aria-label*="Stop"]').waitFor();
    const active = async () => (await t.app.metrics.subscriptionsActive.get()).values.reduce((sum, v) => sum + v.value, 0);
    for (let i = 0; i < 200 && (await active()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await queryRows(t.databaseUrl, `update document set intention = 'NO' where id = $1`, [DEMO_IDS.documents.residenceElecServices]);
    await page.locator('.graphiql-response').getByText('"DOCUMENT"').waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'graphql-ide-subscription.png') });

    const local = [new URL(t.url).origin, new URL(site.url).origin];
    const elsewhere = requests.filter((r) => !local.includes(new URL(r.split(' ')[1]).origin) && !/^[A-Z]+ (data|blob):/.test(r));
    expect(elsewhere).toEqual([]);
    expect(requests.filter((r) => r.includes('/graphql/ide/')).length).toBeGreaterThanOrEqual(6);
    expect(problems).toEqual([]);
  });
});
