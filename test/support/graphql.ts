import { request, type HttpResponse } from './http';

/** POSTs a GraphQL operation to a test server. */
export function gql(baseUrl: string, token: string | undefined, query: string, variables?: Record<string, unknown>, opts: { timeoutMs?: number; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
  return request(baseUrl, 'POST', '/graphql', { token, body: { query, variables }, ...opts });
}
