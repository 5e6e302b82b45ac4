// eslint-disable-next-line @typescript-eslint/no-require-imports -- class-transformer exports its type registry only from this path
const { defaultMetadataStorage } = require('class-transformer/cjs/storage');
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import { targetConstructorToSchema, validationMetadatasToSchemas } from 'class-validator-jsonschema';
import type { ISchemaConverters } from 'class-validator-jsonschema/build/defaultConverters';
import { NOT_BLANK } from '../validation/rules';
import { outputComponents, type JsonSchema } from '../outputs/output';
import { camelToSnake } from '../validation/validation';
import { ALIAS_PREFIX, PREFIXES, type RouteDef } from './route';

const REF = '#/components/schemas/';
const schemaRef = (name: string) => ({ $ref: `${REF}${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** A PostgreSQL WAL position as the service writes it. */
const CONSISTENCY_TOKEN: JsonSchema = { type: 'string', pattern: '^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$', examples: ['0/16B3748'] };

/** The response headers the service sends (docs/openapi.md): request id, rate limits, retry delay, ETag, write position. */
const HEADERS: Record<string, JsonSchema> = {
  'X-Request-Id': {
    description: 'Id of this request in the service\'s log: the caller\'s own `X-Request-Id` when sane, else a new UUID',
    required: true,
    schema: { type: 'string', examples: ['9505a51c-8234-4f23-bc93-80ac9dc2f4d0'] },
  },
  'Retry-After': { description: 'Seconds to wait before trying again', required: true, schema: { type: 'integer', minimum: 1, examples: [30] } },
  'RateLimit-Policy': {
    description: 'The caller\'s quota (draft-ietf-httpapi-ratelimit-headers): `"api";q=<requests>;w=<window seconds>`',
    schema: { type: 'string', examples: ['"api";q=600;w=60'] },
  },
  RateLimit: {
    description: 'What is left of it: `"api";r=<requests left>;t=<seconds until the window resets>`',
    schema: { type: 'string', examples: ['"api";r=598;t=41'] },
  },
  ETag: {
    description: 'Weak tag of the body: send it back in `If-None-Match` to get a 304 while it is unchanged',
    required: true,
    schema: { type: 'string', examples: ['W/"430-WguWFkWpIDjQrai2kLEtSoT8K7I"'] },
  },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this is the stored answer of an earlier request with the same `Idempotency-Key`: nothing was written again',
    schema: { type: 'string', enum: ['true'] },
  },
  'X-Consistency-Token': {
    description: 'Where the database stood once this write committed (a PostgreSQL WAL position), when the service reads '
      + 'from replicas. The same caller\'s reads see the write on any instance without it; send it back as `X-Consistency-Token` '
      + 'to have reads of another caller, or of a client that cannot be identified with the writer, see it too',
    schema: CONSISTENCY_TOKEN,
  },
};

/** The request header that holds a read to a write's position (src/platform/http/read-routing.ts). */
const CONSISTENCY_PARAMETER = {
  name: 'X-Consistency-Token',
  in: 'header',
  required: false,
  description: 'The `X-Consistency-Token` of an earlier write: this read sees at least what that write committed, '
    + 'wherever it runs (a replica that has not applied it yet is not used). Malformed: 400',
  schema: CONSISTENCY_TOKEN,
};
/** The request header that makes a write safe to retry (src/platform/http/idempotency.ts); its answers' lifetime comes from the configuration. */
function idempotencyParameter(ttlSeconds: number) {
  const kept = ttlSeconds % 3600 === 0 ? `${ttlSeconds / 3600} hours` : `${ttlSeconds} seconds`;
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: 'Makes the write safe to retry: any 1-255 visible ASCII characters, unique per request (a UUID). The first answer '
      + `is kept for ${kept} with the write itself; the same request sent again with the key gets that answer (\`Idempotent-Replayed: true\`) `
      + 'and writes nothing; another request with the same key gets 422; a retry while the first still runs gets 409 with `Retry-After`. '
      + 'A request refused (4xx) or failed (5xx) keeps nothing: retry it with the same key',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$', examples: ['5f0c2a4e-1b7d-4c36-9a51-0c8f6e3d2b17'] },
  };
}
const COMMON_HEADERS = { 'X-Request-Id': headerRef('X-Request-Id'), 'RateLimit-Policy': headerRef('RateLimit-Policy'), RateLimit: headerRef('RateLimit') };
const RETRY_HEADERS = { ...COMMON_HEADERS, 'Retry-After': headerRef('Retry-After') };

const ERROR_BODY: JsonSchema = {
  type: 'object',
  description: 'Every REST error: the HTTP status and a sentence; the failing fields of a 400; the request id of a 500',
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer', description: 'The HTTP status', examples: [400] },
    message: { type: 'string', examples: ['The request is not valid'] },
    errors: {
      type: 'array',
      description: 'Of a 400: one item per failing field, by its path as sent (`managers.0.id`)',
      items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string', examples: ['scopes.vat'] }, message: { type: 'string', examples: ['must be at least 1'] } } },
    },
    request_id: { type: 'string', description: 'Of a 500: the request\'s id in the log' },
  },
};

/** Statuses every REST operation may answer, as shared response components. */
const ERRORS: Record<number, { name: string; description: string; headers?: Record<string, unknown> }> = {
  400: { name: 'BadRequest', description: 'Invalid input: the failing fields are listed in `errors`' },
  401: { name: 'Unauthorized', description: 'Missing, invalid or expired bearer token, or one without the service scope' },
  403: { name: 'Forbidden', description: 'Not allowed: token altered or used from another address, no Administrator rights, API not activated' },
  404: { name: 'NotFound', description: 'Unknown id, or an id the caller may not see' },
  409: {
    name: 'Conflict',
    description: 'Conflicts with the current state (archived project, record still in use), or a request with the same `Idempotency-Key` is still running: retry after `Retry-After` seconds',
    headers: { ...COMMON_HEADERS, 'Retry-After': { description: 'Only for a request with the same `Idempotency-Key` still running: seconds to wait', schema: { type: 'integer', minimum: 1, examples: [1] } } },
  },
  413: { name: 'PayloadTooLarge', description: 'Body larger than 1 MiB' },
  414: { name: 'UriTooLong', description: 'Request target too long (refused by the HTTP server before any operation runs)', headers: { 'X-Request-Id': headerRef('X-Request-Id') } },
  415: { name: 'UnsupportedMediaType', description: 'Body not JSON (`Content-Type: application/json`), or in a content coding other than gzip, deflate, br' },
  431: { name: 'HeadersTooLarge', description: 'Request headers too large (refused by the HTTP server before any operation runs)', headers: { 'X-Request-Id': headerRef('X-Request-Id') } },
  422: { name: 'IdempotencyKeyReused', description: 'The `Idempotency-Key` was sent before with another request (method, path or body): a new request needs a new key' },
  429: { name: 'TooManyRequests', description: 'Too many requests from this caller: wait `Retry-After` seconds', headers: RETRY_HEADERS },
  500: { name: 'InternalError', description: 'A fault of the service; `request_id` names it in the log' },
  503: { name: 'ServiceUnavailable', description: 'Database unavailable or saturated: try again after `Retry-After` seconds', headers: RETRY_HEADERS },
};

const ERROR_RESPONSES = Object.fromEntries(Object.values(ERRORS).map((e) => [e.name, {
  description: e.description,
  headers: e.headers ?? COMMON_HEADERS,
  content: { 'application/json': { schema: schemaRef('ErrorBody') } },
}]));

const TAGS = [
  { name: 'Projects', description: 'Projects of the caller\'s organizations and their statistics (#1-#5)' },
  { name: 'Project trades', description: 'Trades (lots) of a project (#6-#9)' },
  { name: 'Templates', description: 'DPGF templates, slices, invitations and contractors\' answers (#10-#16)' },
  { name: 'Organizations', description: 'Architect organizations, their users and headquarters (#17-#21)' },
  { name: 'Contractors', description: 'The contractor directory (#22)' },
  { name: 'Trade lists', description: 'Catalogues of trades projects are created from (#23-#24)' },
  { name: 'Tools', description: 'Conversion between legacy identifiers and UUIDs (#25, #32)' },
  { name: 'Partner roles', description: 'Roles of users on the partner platform (#26-#28)' },
  { name: 'Trade categories', description: 'Categories of trades, by name or id (internal, #29-#31)' },
  { name: 'Companies', description: 'Contractor companies by SIRET (internal, #33-#34)' },
  { name: 'Credits', description: 'Credits consumed by invitations (#35)' },
  { name: 'Leveling', description: 'Bid leveling: every lot\'s offers side by side (an extension beside the interface, docs/leveling.md)' },
  { name: 'Webhooks', description: 'Endpoints that receive the organization\'s events, signed per Standard Webhooks (an extension beside the interface, docs/webhooks.md)' },
  { name: 'Authentication', description: 'The development identity provider\'s token endpoint (decisions.md section 3)' },
];

const converters: ISchemaConverters = {
  [ValidationTypes.CUSTOM_VALIDATION]: (meta) =>
    meta.name === 'isDateInput' ? { type: 'string', description: 'YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (no zone)' }
      : meta.name === NOT_BLANK ? { pattern: '\\S' } : {},
};
const schemaOptions = {
  refPointerPrefix: REF,
  classTransformerMetadataStorage: defaultMetadataStorage,
  classValidatorMetadataStorage: getMetadataStorage(),
  additionalConverters: converters,
};

/** Input classes are camelCase; REST bodies and queries are snake_case: renames properties deeply. */
function snakeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(snakeSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties' && v && typeof v === 'object') {
      out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [camelToSnake(p), snakeSchema(s)]));
    } else if (k === 'required' && Array.isArray(v)) {
      out.required = v.map((p: string) => camelToSnake(p));
    } else out[k] = snakeSchema(v);
  }
  return out;
}

/** The generator marks @IsDefined fields with `not: {type: null}`; OpenAPI says it with `required`. */
function liftRequired(schema: Record<string, unknown>): Record<string, unknown> {
  const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!props) return schema;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  for (const [name, p] of Object.entries(props)) {
    const not = p.not as { type?: unknown } | undefined;
    if (not && not.type === 'null') {
      required.add(name);
      delete p.not;
    }
  }
  return required.size ? { ...schema, required: [...required] } : schema;
}

/** `/a{/:b}` gives `/a` and `/a/:b`. */
export function expandOptional(path: string): string[] {
  const m = /\{(\/:\w+)\}/.exec(path);
  return m ? [path.replace(m[0], ''), path.replace(m[0], m[1])] : [path];
}

export const toOpenApiPath = (path: string) => path.replace(/\{\/:(\w+)\}/g, '/{$1}').replace(/:(\w+)/g, '{$1}');

/** The leading `/api` the alias prefix leaves out (interface.md: "a form ... without the leading /api segment"). */
const API_SEGMENT = PREFIXES.svc.slice(0, PREFIXES.svc.length - ALIAS_PREFIX.length);
if (API_SEGMENT + ALIAS_PREFIX !== PREFIXES.svc) throw new Error('The alias prefix must be the service prefix without its first segment');

/** The extension of a path item that names its alias: the same operations, served there too. */
const ALIAS_EXTENSION = 'x-also-served-at';

/**
 * An operation served at `/api/svc/v1/...` and `/svc/v1/...` is one operation, keyed by the interface's P form (what
 * clients generated from this document call, as interface.md writes it); its alias is named on the path item
 * (`x-also-served-at`, and in its description), not repeated as a second entry with twin operations.
 */
function documentedPath(r: RouteDef): { key: string; item?: Record<string, unknown> } {
  const key = toOpenApiPath(PREFIXES[r.prefix] + r.path);
  if (!r.alias) return { key };
  const alias = toOpenApiPath(ALIAS_PREFIX + r.path);
  return { key, item: { description: `Also served at \`${alias}\`, the interface's form without the leading \`${API_SEGMENT}\`.`, [ALIAS_EXTENSION]: alias } };
}

function successResponse(r: RouteDef, status: number, description: string): JsonSchema {
  if (status === 204) return { description, headers: { ...COMMON_HEADERS, 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } };
  const headers = r.method === 'get' ? { ...COMMON_HEADERS, ETag: headerRef('ETag') }
    : { ...COMMON_HEADERS, 'X-Consistency-Token': headerRef('X-Consistency-Token'), 'Idempotent-Replayed': headerRef('Idempotent-Replayed') };
  const others = Object.entries(r.success.otherMediaTypes ?? {}).map(([type, schema]) => [type, { schema }]);
  return { description, headers, content: { 'application/json': { schema: r.success.schema }, ...Object.fromEntries(others) } };
}

function operationOf(r: RouteDef, inputs: Record<string, JsonSchema>, idempotencyKeyTtlSeconds: number): JsonSchema {
  const parameters: unknown[] = [];
  if (r.params) {
    const s = liftRequired(targetConstructorToSchema(r.params, schemaOptions) as Record<string, unknown>) as { properties?: Record<string, unknown> };
    for (const [name, schema] of Object.entries(s.properties ?? {})) parameters.push({ name, in: 'path', required: true, schema });
  }
  if (r.query) {
    const s = liftRequired(snakeSchema(targetConstructorToSchema(r.query, schemaOptions)) as Record<string, unknown>) as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, { description, ...schema }] of Object.entries(s.properties ?? {})) {
      parameters.push({ name, in: 'query', required: (s.required ?? []).includes(name), ...(description ? { description } : {}), schema });
    }
  }
  parameters.push(r.method === 'get' ? CONSISTENCY_PARAMETER : idempotencyParameter(idempotencyKeyTtlSeconds));
  const responses: Record<string, unknown> = { [r.success.status]: successResponse(r, r.success.status, r.success.description) };
  if (r.success.also) responses[r.success.also.status] = successResponse(r, r.success.also.status, r.success.also.description);
  if (r.method === 'get') {
    responses[304] = { description: 'Not modified: the `If-None-Match` tag is still current', headers: { 'X-Request-Id': headerRef('X-Request-Id'), ETag: headerRef('ETag') } };
  }
  const statuses = [400, 401, 403, 404, ...(r.errors ?? []), ...(r.body ? [413, 415] : []), ...(r.method === 'get' ? [] : [409, 422]), 414, 429, 431, 500, 503];
  for (const status of [...new Set(statuses)].sort((a, b) => a - b)) {
    const own = r.errorBodies?.[status];
    responses[status] = own ? { description: own.description, headers: COMMON_HEADERS, content: { 'application/json': { schema: own.schema } } } : responseRef(ERRORS[status].name);
  }
  const operation: JsonSchema = {
    operationId: r.operationId,
    summary: r.summary,
    description: r.operation === undefined ? r.description : `Operation #${r.operation} of the interface document.${r.description ? ` ${r.description}` : ''}`,
    tags: [r.tag],
    ...(r.operation === undefined ? {} : { 'x-interface-operation': r.operation }),
    ...(parameters.length ? { parameters } : {}),
    responses,
  };
  if (r.body) {
    const name = r.body.name;
    inputs[name] = liftRequired(snakeSchema(targetConstructorToSchema(r.body, schemaOptions)) as Record<string, unknown>);
    operation.requestBody = { required: !r.bodyOptional, content: { 'application/json': { schema: schemaRef(name) } } };
  }
  return operation;
}

/** The schemas of the input classes a document refers to (nested inputs included), by name. */
function inputComponents(document: unknown): Record<string, JsonSchema> {
  const all = validationMetadatasToSchemas(schemaOptions);
  const out: Record<string, JsonSchema> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith(REF)) {
          const name = v.slice(REF.length);
          if (all[name] && !out[name]) {
            out[name] = liftRequired(snakeSchema(all[name]) as Record<string, unknown>);
            visit(out[name]);
          }
        } else visit(v);
      }
    }
  };
  visit(document);
  return out;
}

export interface OpenApiOptions {
  /** Token endpoint of the password flow ("Authorize" in the reference page). */
  tokenUrl: string;
  /** The scope every token must carry. */
  scope: string;
  /** Describe /auth/token (the built-in development identity provider serves it): its tag is listed. */
  tokenEndpoint: boolean;
  /** Operations that are not route definitions (the token endpoint), by path. */
  paths?: Record<string, Record<string, unknown>>;
  /** How long the answers of keyed writes are kept (IDEMPOTENCY_KEY_TTL_SECONDS). */
  idempotencyKeyTtlSeconds: number;
  /** Components the operations refer to besides inputs and outputs (error bodies of their own, the token's). */
  schemas?: Record<string, JsonSchema>;
}

/** The OpenAPI 3.1 description, generated from the route definitions, their input classes and output records. */
export function buildOpenApi(routes: RouteDef[], options: OpenApiOptions): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const inputs: Record<string, JsonSchema> = {};
  for (const r of routes) {
    const { key, item } = documentedPath(r);
    if (paths[key]?.[r.method]) throw new Error(`Two operations at ${r.method} ${key}`);
    paths[key] ??= { ...item };
    paths[key][r.method] = operationOf(r, inputs, options.idempotencyKeyTtlSeconds);
  }
  Object.assign(paths, options.paths);
  const schemas: Record<string, JsonSchema> = { ErrorBody: ERROR_BODY, ...options.schemas };
  Object.assign(schemas, inputComponents({ paths, schemas }), outputComponents({ paths, schemas }));
  const scopes = { [options.scope]: 'This service (required: a token without it is refused with 401)', email: 'The user\'s email', profile: 'The user\'s name' };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Project Tendering Service',
      version: '1.0.0',
      description: 'Projects, trades, DPGF templates, contractor answers, statistics and credits of architect organizations. '
        + 'Every operation needs a bearer token from the OpenID Connect identity provider: "Authorize" obtains one with a username and password (OAuth 2 password flow).',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'Tender BFF maintainers' },
    },
    servers: [{ url: '/', description: 'This service' }],
    tags: TAGS.filter((t) => t.name !== 'Authentication' || options.tokenEndpoint),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    security: [{ oauth2: [options.scope] }],
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses: ERROR_RESPONSES,
      headers: HEADERS,
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'Bearer JWTs of the identity provider, obtained with a username and password (`grant_type=password`, `client_id`, `scope`)',
          flows: { password: { tokenUrl: options.tokenUrl, refreshUrl: options.tokenUrl, scopes } },
        },
      },
    },
  };
}
