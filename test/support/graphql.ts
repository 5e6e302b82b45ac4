import { request, type HttpResponse } from './http';

/** POSTs a GraphQL operation to a test server. */
export function gql(baseUrl: string, token: string | undefined, query: string, variables?: Record<string, unknown>, opts: { timeoutMs?: number; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
  return request(baseUrl, 'POST', '/graphql', { token, body: { query, variables }, ...opts });
}

/**
 * The body of an answer whose operation ran: its data and, in `extensions.cost`, what the operation cost
 * (src/platform/graphql/cost.ts; exact figures are test/graphql.cost.test.ts's).
 */
export function answered(data: unknown): { data: unknown; extensions: { cost: unknown } } {
  return { data, extensions: { cost: { requested: expect.any(Number), actual: expect.any(Number), limit: 20000 } } };
}
