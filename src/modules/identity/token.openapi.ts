import type { JsonSchema } from '../../platform/outputs/output';

// The token endpoint of the development identity provider (decisions.md section 3), in OAuth 2's own shapes
// (RFC 6749 sections 4.3 and 5): a form in, `{ access_token, ... }` or `{ error, error_description }` out.

const TOKEN_RESPONSE: JsonSchema = {
  type: 'object',
  required: ['access_token', 'expires_in', 'refresh_token', 'refresh_expires_in', 'token_type', 'not-before-policy', 'session_state', 'scope'],
  properties: {
    access_token: { type: 'string', description: 'A JWT: send it as `Authorization: Bearer <access_token>`' },
    expires_in: { type: 'integer', description: 'Seconds', examples: [10800] },
    refresh_token: { type: 'string', description: 'Used once, with `grant_type=refresh_token`' },
    refresh_expires_in: { type: 'integer', description: 'Seconds', examples: [1800] },
    token_type: { type: 'string', enum: ['Bearer'] },
    'not-before-policy': { type: 'integer', description: 'Epoch seconds', examples: [0] },
    session_state: { type: 'string', format: 'uuid' },
    scope: { type: 'string', examples: ['svc email profile'] },
  },
};

const OAUTH_ERROR: JsonSchema = {
  type: 'object',
  required: ['error', 'error_description'],
  properties: {
    error: {
      type: 'string',
      enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'access_denied', 'slow_down', 'temporarily_unavailable', 'server_error'],
    },
    error_description: { type: 'string', examples: ['Invalid user credentials'] },
  },
};

export const TOKEN_COMPONENTS: Record<string, JsonSchema> = { TokenResponse: TOKEN_RESPONSE, OAuthError: OAUTH_ERROR };

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const oauthError = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { 'X-Request-Id': header('X-Request-Id'), ...headers },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/OAuthError' } } },
});

/** POST /auth/token: the password and refresh-token grants. */
export function tokenPath(scope: string): JsonSchema {
  const form: JsonSchema = {
    type: 'object',
    required: ['grant_type', 'client_id'],
    properties: {
      grant_type: { type: 'string', enum: ['password', 'refresh_token'] },
      client_id: { type: 'string', description: 'The configured client (also accepted as HTTP Basic client authentication with an empty secret)', examples: ['svc-api'] },
      username: { type: 'string', description: 'With `password`', examples: ['architect@demo.test'] },
      password: { type: 'string', description: 'With `password`', examples: ['demo-password'] },
      scope: { type: 'string', description: `With \`password\`: must include \`${scope}\``, examples: [`${scope} email profile`] },
      refresh_token: { type: 'string', description: 'With `refresh_token`' },
    },
  };
  return {
    post: {
      operationId: 'requestToken',
      summary: 'Issues an access token for a username and password, or for a refresh token.',
      description: 'The token endpoint of the built-in development identity provider (decisions.md section 3), served when it is on (AUTH_DEV_PROVIDER); in production tokens come from the configured identity provider. OAuth 2 bodies (RFC 6749), not the REST error body.',
      tags: ['Authentication'],
      security: [],
      requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: form } } },
      responses: {
        200: {
          description: 'The token response of the interface',
          headers: { 'X-Request-Id': header('X-Request-Id'), 'Cache-Control': { description: 'Never stored', schema: { type: 'string', enum: ['no-store'] } } },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/TokenResponse' } } },
        },
        400: oauthError('`invalid_request` (a parameter missing, or not a form), `unsupported_grant_type`, or `invalid_grant` for an unknown, expired or reused refresh token'),
        401: oauthError('`invalid_client` (another client_id) or `invalid_grant` (wrong username or password)'),
        413: oauthError('`invalid_request`: the form is larger than the limit'),
        415: oauthError('`invalid_request`: the form is in a content coding other than gzip, deflate, br'),
        414: oauthError('`invalid_request`: the request target is too long'),
        429: oauthError('`slow_down`: too many attempts; wait `Retry-After` seconds', { 'Retry-After': header('Retry-After') }),
        431: oauthError('`invalid_request`: the request headers are too large'),
        500: oauthError('`server_error`'),
        503: oauthError('`temporarily_unavailable`: the database cannot answer; wait `Retry-After` seconds', { 'Retry-After': header('Retry-After') }),
      },
    },
  };
}
