/*
 * The script of the front-end page of test/browser.test.ts, bundled with esbuild at test time and served from
 * another origin than the service: what a front end does with the service, through CORS and Apollo Client.
 * Runs in Chromium; its result goes back to the test through `page.evaluate`.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';

// The DOM, reduced to what this page uses (the project compiles without the DOM library).
declare const document: { getElementById(id: string): { textContent: string | null } | null };

/** The mutation the page runs, and where its answer holds the trade it created. */
const CREATE_TRADE = gql`
  mutation CreateTrade($projectId: ID!, $input: CreateProjectTradeInput!) {
    createProjectTrade(projectId: $projectId, input: $input) { trade { id name number } project { id trades { id name } } }
  }
`;
type CreateTradeAnswer = {
  createProjectTrade: { trade: { __typename: string; id: string; name: string }; project: { id: string; trades: Array<{ id: string; name: string }> } };
};
const createdTrade = (data: CreateTradeAnswer) => data.createProjectTrade.trade;

export interface ScenarioInput {
  service: string;
  username: string;
  password: string;
  dashboardQuery: string;
}

export interface ScenarioResult {
  /** A GraphQL call without a token: the page could read the 401 and its code. */
  unauthenticated: { status: number; code: string | undefined };
  /** The token request: the request id the page sent, and the one it could read back (an exposed header). */
  signIn: { status: number; requestIdSent: string; requestIdRead: string | null; tokenType: string };
  dashboard: { totalCount: number; projects: string[]; templates: number; documents: number; errors: number };
  mutation: { typename: string; id: string; name: string; cachedName: string | null };
  /** REST, from the same page: the trade GraphQL created is listed. */
  rest: { status: number; tradeListed: boolean };
}

async function run(input: ScenarioInput): Promise<ScenarioResult> {
  const { service } = input;

  const anonymous = await fetch(`${service}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: '{ me { id } }' }),
  });
  const anonymousBody = await anonymous.json() as { errors?: Array<{ extensions?: { code?: string } }> };

  // The token request of a front end (a form), with a request id of its own, which makes it preflighted.
  const requestIdSent = `page-sign-in-${Date.now()}`;
  const tokenAnswer = await fetch(`${service}/auth/token`, {
    method: 'POST',
    headers: { 'X-Request-Id': requestIdSent },
    body: new URLSearchParams({ grant_type: 'password', client_id: 'svc-api', username: input.username, password: input.password, scope: 'svc email profile' }),
  });
  const token = await tokenAnswer.json() as { access_token: string; token_type: string };

  const client = new ApolloClient({
    link: new HttpLink({ uri: `${service}/graphql`, headers: { Authorization: `Bearer ${token.access_token}` } }),
    cache: new InMemoryCache(),
  });
  type Dashboard = { projects: { totalCount: number; nodes: Array<{ id: string; name: string; archived: boolean; templates: Array<{ documents: unknown[] }> }> } };
  const dashboard = await client.query<Dashboard>({ query: gql(input.dashboardQuery) });
  const projects = dashboard.data!.projects.nodes;
  const project = projects.find((p) => !p.archived)!;

  const suffix = Date.now().toString(36);
  const mutation = await client.mutate<CreateTradeAnswer>({
    mutation: CREATE_TRADE,
    variables: { projectId: project.id, input: { name: `Browser trade ${suffix}`, number: `B${suffix}`.slice(0, 32), shortName: 'BRW' } },
  });
  const trade = createdTrade(mutation.data!);
  const cached = client.cache.extract() as Record<string, { name?: string }>;

  const rest = await fetch(`${service}/api/svc/v1/projects/${project.id}/trades`, { headers: { Authorization: `Bearer ${token.access_token}` } });
  const restBody = await rest.json() as { trades: Array<{ id: string }> };

  const result: ScenarioResult = {
    unauthenticated: { status: anonymous.status, code: anonymousBody.errors?.[0]?.extensions?.code },
    signIn: { status: tokenAnswer.status, requestIdSent, requestIdRead: tokenAnswer.headers.get('X-Request-Id'), tokenType: token.token_type },
    dashboard: {
      totalCount: dashboard.data!.projects.totalCount,
      projects: projects.map((p) => p.name),
      templates: projects.reduce((n, p) => n + p.templates.length, 0),
      documents: projects.reduce((n, p) => n + p.templates.reduce((m, t) => m + t.documents.length, 0), 0),
      errors: dashboard.error ? 1 : 0,
    },
    mutation: { typename: trade.__typename, id: trade.id, name: trade.name, cachedName: cached[`ProjectTrade:${trade.id}`]?.name ?? null },
    rest: { status: rest.status, tradeListed: restBody.trades.some((t) => t.id === trade.id) },
  };
  const out = document.getElementById('out');
  if (out) out.textContent = JSON.stringify(result, null, 2);
  return result;
}

(globalThis as unknown as { runScenario: typeof run }).runScenario = run;
