// eslint-disable-next-line @typescript-eslint/no-require-imports -- class-transformer exports its type registry only from this path
const { defaultMetadataStorage } = require('class-transformer/cjs/storage');
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import { targetConstructorToSchema, validationMetadatasToSchemas } from 'class-validator-jsonschema';
import type { ISchemaConverters } from 'class-validator-jsonschema/build/defaultConverters';
import { NOT_BLANK } from '../services/inputs/rules';
import { outputComponents } from '../services/outputs/output';
import { camelToSnake } from '../services/validation';
import { ALIAS_PREFIX, PREFIXES, type JsonSchema, type RouteDef } from './route';

const REF = '#/components/schemas/';
const HEADER_REF = '#/components/headers/';

/** Response headers of the rate limits (draft-ietf-httpapi-ratelimit-headers), carried by every answer. */
const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Policy': { description: 'The caller\'s quota: `"api";q=<requests>;w=<window seconds>`', schema: { type: 'string' } },
  RateLimit: { description: 'What is left of it: `"api";r=<requests left>;t=<seconds until the window resets>`', schema: { type: 'string' } },
};

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

const ERROR_BODY: JsonSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer' },
    message: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } } },
    request_id: { type: 'string' },
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input: the failing fields are listed in `errors`',
  401: 'Missing, invalid or expired bearer token',
  403: 'Not allowed (token altered or used from another address, no Administrator rights, API not activated)',
  404: 'Unknown id, or an id the caller may not see',
  409: 'Conflicts with the current state (archived project, record still in use)',
  413: 'Body larger than 1 MiB',
  415: 'Body is not JSON',
};

/** The OpenAPI 3.1 description, generated from the route definitions and their input classes. */
export function buildOpenApi(routes: RouteDef[], serverUrl = '/'): JsonSchema {
  const schemas: Record<string, unknown> = { ErrorBody: ERROR_BODY };
  for (const [name, schema] of Object.entries(validationMetadatasToSchemas(schemaOptions))) schemas[name] = liftRequired(snakeSchema(schema) as Record<string, unknown>);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const parameters: unknown[] = [];
    if (r.params) {
      const s = liftRequired(targetConstructorToSchema(r.params, schemaOptions) as Record<string, unknown>) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(s.properties ?? {})) {
        parameters.push({ name, in: 'path', required: !r.path.includes(`{/:${name}}`), schema });
      }
    }
    if (r.query) {
      const s = liftRequired(snakeSchema(targetConstructorToSchema(r.query, schemaOptions)) as Record<string, unknown>) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(s.properties ?? {})) {
        parameters.push({ name, in: 'query', required: (s.required ?? []).includes(name), schema });
      }
    }
    const responses: Record<string, unknown> = {
      [r.success.status]: r.success.status === 204
        ? { description: r.success.description }
        : {
          description: r.success.description,
          content: {
            'application/json': { schema: r.success.schema ?? { type: 'object' } },
            ...Object.fromEntries(Object.entries(r.success.otherMediaTypes ?? {}).map(([type, schema]) => [type, { schema }])),
          },
        },
    };
    for (const status of [400, 401, 403, 404, ...(r.errors ?? [])]) {
      responses[status] = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: { $ref: `${REF}ErrorBody` } } } };
    }
    // Every operation is rate limited per caller (src/http/rate-limit.middleware.ts, docs/rate-limits.md).
    responses[429] = {
      description: 'Too many requests from this caller: wait `Retry-After` seconds',
      headers: { 'Retry-After': { $ref: `${HEADER_REF}Retry-After` }, 'RateLimit-Policy': { $ref: `${HEADER_REF}RateLimit-Policy` }, RateLimit: { $ref: `${HEADER_REF}RateLimit` } },
      content: { 'application/json': { schema: { $ref: `${REF}ErrorBody` } } },
    };
    const operation: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      description: r.description ?? `Operation #${r.operation} of the interface document.`,
      tags: [r.tag],
      parameters,
      responses,
      security: [{ bearer: [] }],
    };
    if (r.body) {
      operation.requestBody = {
        required: !r.bodyOptional,
        content: { 'application/json': { schema: { $ref: `${REF}${r.body.name}` } } },
      };
    }
    // An optional segment (`{/:version}`) cannot be said in OpenAPI: describe the path without it and with it.
    const variants = expandOptional(r.path);
    const fullPaths = [PREFIXES[r.prefix], ...(r.alias ? [ALIAS_PREFIX] : [])].flatMap((prefix) => variants.map((v) => prefix + v));
    fullPaths.forEach((p, i) => {
      const key = toOpenApiPath(p);
      const inPath = new Set([...key.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
      const own = (operation.parameters as { name: string; in: string }[])
        .filter((param) => param.in !== 'path' || inPath.has(param.name))
        .map((param) => (param.in === 'path' ? { ...param, required: true } : param));
      paths[key] ??= {};
      paths[key][r.method] = {
        ...operation,
        parameters: own,
        operationId: i === 0 ? r.operationId : `${r.operationId}${i}`,
        ...(i === 0 ? {} : { description: `${operation.description as string} Another path of operation ${r.operationId}.` }),
      };
    });
  }
  // The named schemas of the answers: the output records the success schemas reference.
  Object.assign(schemas, outputComponents(paths));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Project Tendering Service',
      version: '1.0.0',
      description: 'Projects, trades, DPGF templates, contractor answers, statistics and credits of architect organizations. Every operation needs a bearer token from the OpenID Connect provider (development: POST /auth/token).',
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas,
      headers: RATE_LIMIT_HEADERS,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
