/**
 * A typed client of the service's GraphQL interface, as a front end writes one: Apollo Client with its
 * normalized cache, over the documents generated from examples/graphql/*.graphql (`npm run codegen`). Every
 * variable and result below is typed from the schema: a misspelt field, a wrong enum value or a missing
 * variable fails the typecheck. test/graphql.apollo-cache.test.ts runs it against the service.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, split } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import type { DocumentNode } from 'graphql';
import { isSubscriptionOperation } from '@apollo/client/utilities';
import { createClient as createWsClient } from 'graphql-ws';
import {
  AddTemplateDocument, DashboardChangesDocument, DashboardDocument, InviteContractorsDocument, ProjectPageDocument, UpdateProjectTradeDocument,
  type AddTemplateMutation, type ContractorInvitationInput, type DashboardChangesSubscription, type DashboardQuery, type DocumentState,
  type ProjectPageQuery, type UpdateProjectTradeInput,
} from './generated/graphql';

export interface ClientOptions {
  /** The service's GraphQL endpoint, e.g. http://localhost:3000/graphql */
  url: string;
  /** An access token from /auth/token, sent as `Authorization: Bearer`. */
  token: string;
  /** The fetch to use; Node 18+ and browsers have one. */
  fetch?: typeof fetch;
  /** The WebSocket class for subscriptions: browsers have one; in Node, the `ws` package's. */
  webSocketImpl?: unknown;
  /**
   * Send operations by their id in the manifest `npm run codegen` writes, never their text (docs/trusted-documents.md):
   * queries as GETs, mutations as POSTs, subscriptions over WebSocket, each with Apollo's `persistedQuery` extension.
   */
  trustedDocuments?: boolean;
}

/** The manifest id codegen gave a typed document (`__meta__.hash`), as Apollo's extension carries it. */
function trustedId(document: DocumentNode): string {
  const hash = (document as { __meta__?: { hash?: string } }).__meta__?.hash;
  if (!hash) throw new Error('not an operation of the manifest (examples/graphql, npm run codegen)');
  return hash.replace(/^sha256:/, '');
}

/**
 * The cache needs no configuration: every object that may change has an `id` unique across types, so the default
 * key `__typename:id` is right. Statistics are keyed by derived ids ("<projectId>:statistics").
 */
export function createClient({ url, token, fetch: fetchImpl = fetch, webSocketImpl, trustedDocuments = false }: ClientOptions): ApolloClient {
  const http = new HttpLink({ uri: url, fetch: fetchImpl, headers: { authorization: `Bearer ${token}` } });
  // Subscriptions over WebSocket on the same URL (graphql-ws), the token in connection_init; opened at the first
  // subscription, closed after the last.
  const ws = new GraphQLWsLink(createWsClient({
    url: url.replace(/^http/, 'ws'),
    connectionParams: { Authorization: `Bearer ${token}` },
    ...(webSocketImpl ? { webSocketImpl } : {}),
    // By id, a subscription's text is left out of its `subscribe` message.
    ...(trustedDocuments ? { jsonMessageReplacer: (key: string, value: unknown) => (key === 'payload' && hasId(value) ? { ...value, query: '' } : value) } : {}),
  }));
  const byId = trustedDocuments
    ? {
      http: new PersistedQueryLink({ generateHash: trustedId, useGETForHashedQueries: true }).concat(http),
      ws: new ApolloLink((operation, forward) => {
        operation.extensions = { ...operation.extensions, persistedQuery: { version: 1, sha256Hash: trustedId(operation.query) } };
        return forward(operation);
      }).concat(ws),
    }
    : { http, ws };
  return new ApolloClient({
    link: split(({ query }) => isSubscriptionOperation(query), byId.ws, byId.http),
    cache: new InMemoryCache(),
  });
}

const hasId = (payload: unknown): payload is Record<string, unknown> =>
  typeof payload === 'object' && payload !== null && 'extensions' in payload
  && typeof (payload as { extensions?: { persistedQuery?: unknown } }).extensions?.persistedQuery === 'object';

function required<T>(data: T | undefined, what: string): T {
  if (data === undefined) throw new Error(`${what}: no data`);
  return data;
}

export async function dashboard(client: ApolloClient, first?: number): Promise<DashboardQuery> {
  const { data } = await client.query({ query: DashboardDocument, variables: { first } });
  return required(data, 'Dashboard');
}

/** The dashboard as the cache holds it, without a request; null when the cache lacks part of it. */
export function cachedDashboard(client: ApolloClient, first?: number): DashboardQuery | null {
  return client.readQuery({ query: DashboardDocument, variables: { first } });
}

export async function projectPage(client: ApolloClient, id: string): Promise<ProjectPageQuery['project']> {
  const { data } = await client.query({ query: ProjectPageDocument, variables: { id } });
  return required(data, 'ProjectPage').project;
}

export async function renameTrade(client: ApolloClient, projectId: string, tradeId: string, input: UpdateProjectTradeInput): Promise<void> {
  await client.mutate({ mutation: UpdateProjectTradeDocument, variables: { projectId, tradeId, input } });
}

export async function addTemplate(client: ApolloClient, projectId: string, tradeId: string, budget?: number): Promise<AddTemplateMutation['addTemplate']> {
  const { data } = await client.mutate({ mutation: AddTemplateDocument, variables: { projectId, input: { tradeId, budget } } });
  return required(data, 'AddTemplate').addTemplate;
}

export async function invite(client: ApolloClient, projectId: string, templateId: string, contractors: ContractorInvitationInput[]): Promise<number> {
  const { data } = await client.mutate({ mutation: InviteContractorsDocument, variables: { projectId, templateId, contractors } });
  return required(data, 'InviteContractors').inviteContractors.created;
}

/**
 * Keeps the dashboard live: each update's project (the dashboard's own fields) is written to the cache, so
 * `cachedDashboard` shows it at once, without a refetch. Returns the function that stops it.
 */
export function liveDashboard(client: ApolloClient, onUpdate: (change: DashboardChangesSubscription['projectChanged']) => void, projectIds?: string[]): () => void {
  const subscription = client.subscribe({ query: DashboardChangesDocument, variables: { projectIds } }).subscribe({
    next: ({ data }) => {
      if (data) onUpdate(data.projectChanged);
    },
  });
  return () => subscription.unsubscribe();
}

/** Documents of a project by state: the enum is a union of its values, so the record has exactly these keys. */
export function documentsByState(project: ProjectPageQuery['project']): Record<DocumentState, number> {
  const counts: Record<DocumentState, number> = { PENDING: 0, ANSWERED: 0, IN_REVISION: 0, DECLINED: 0 };
  for (const template of project.templates) for (const document of template.documents) counts[document.state]++;
  return counts;
}
