import fc from 'fast-check';
import {
  getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, isObjectType, isScalarType,
  type GraphQLArgument, type GraphQLField, type GraphQLInputType, type GraphQLObjectType, type GraphQLSchema,
} from 'graphql';
import { graphqlSchema } from '../../src/modules/schema';
import { DEMO_IDS } from '../../src/seed/demo-data';
import { startTestApp, type TestApp } from '../support/app';
import { tokenFor } from '../support/auth';
import { request, type HttpResponse } from '../support/http';
import { leakIn } from '../support/leaks';
import { GRAPHQL_LIMIT_CODES } from '../../src/platform/errors/errors';

// Seeded fuzzing of /graphql, driven by the schema: operations built from its real fields, arguments and
// input types (valid, with wrong values, with wrong variables), their text broken, syntax garbage, deep
// nesting, many aliases and directives, wrong methods, content types and bodies. Every answer must be a
// 4xx or a 2xx in GraphQL's shape with a documented code, and carry nothing internal.
// FUZZ_RUNS sets the number of requests: 500 in npm test (about 11 ms of CPU each), 20,000 with npm run fuzz;
// FUZZ_SEED runs another sequence.

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

/** decisions.md sections 7 and 8 and the limits of docs/decisions.md: every code a GraphQL error may carry, INTERNAL_SERVER_ERROR excluded. */
const CODES = new Set<string>(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'CONFLICT', 'RATE_LIMITED',
  'SERVICE_UNAVAILABLE', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', ...GRAPHQL_LIMIT_CODES]);

interface FuzzRequest {
  method: string;
  /** Path and query string. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

let t: TestApp;
let schema: GraphQLSchema;
let tokens: string[];

beforeAll(async () => {
  t = await startTestApp();
  schema = await graphqlSchema();
  tokens = [await tokenFor(t.url, 'architect@demo.test'), await tokenFor(t.url, 'member@demo.test')];
});
afterAll(() => t.close());

// ------------------------------------------------------------------------------------------------------
// Values, from the schema's input types or deliberately not
// ------------------------------------------------------------------------------------------------------

/** Every identifier of the demo data: records of the caller's organizations, of others, of every kind. */
const KNOWN_IDS: string[] = (function collect(value: unknown): string[] {
  return typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(collect) : [];
})(DEMO_IDS);

/** Short text that is sometimes hostile: quotes, escapes, NUL, unicode, GraphQL punctuation, huge. */
const text = fc.oneof(
  { arbitrary: fc.string({ maxLength: 12 }), weight: 5 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 2 },
  { arbitrary: fc.constantFrom('', ' ', '   ', '\u0000', '"', '\\', '{', '$x', '__proto__', 'constructor', '2026-13-45', 'NaN'), weight: 2 },
  { arbitrary: fc.integer({ min: 1000, max: 20000 }).map((n) => 'x'.repeat(n)), weight: 1 },
);

/** A JSON value of any kind, to send where the schema expects another. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

/**
 * The schema walk draws from a PRNG seeded by fast-check (fc.gen compares its arguments structurally, which
 * loops on the schema's cyclic types); its values come from pools fast-check filled with the same seed.
 */
class Rng {
  /** A careful draw makes no deliberate mistake (wrong values, unknown fields...): most operations then run. */
  readonly careful: boolean;
  constructor(private state: number) {
    this.careful = !this.oneIn(3);
  }
  /** mulberry32 */
  next(): number {
    let x = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }
  oneIn(n: number): boolean {
    return this.int(1, n) === 1;
  }
  /** A deliberate mistake, once in n draws of a sloppy operation. */
  mistake(n: number): boolean {
    return !this.careful && this.oneIn(n);
  }
}

const pool = <T>(arbitrary: fc.Arbitrary<T>) => fc.sample(arbitrary, { seed: SEED, numRuns: 300 });
const POOLS = {
  text: pool(text),
  json: pool(anyJson),
  id: pool(fc.oneof(fc.constantFrom(...KNOWN_IDS), fc.uuid(), fc.constant(KNOWN_IDS[0].toUpperCase()), text)),
  int: pool(fc.oneof(fc.integer({ min: -5, max: 600 }), fc.integer(), fc.constant(2 ** 53))),
  float: pool(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -1, max: 100 }))),
  dateTime: pool(fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), text)),
  string: pool(fc.oneof(text, fc.constantFrom('2027-03-01', '2027-03-01T00:00:00', 'EUR', 'DPGF', 'public_building', 'a@b.fr'))),
};

/** A value for a GraphQL input type: usually of that type, sometimes of none. */
function inputValue(r: Rng, type: GraphQLInputType, depth = 0): unknown {
  if (r.mistake(20)) return r.pick(POOLS.json);
  if (isNonNullType(type)) return inputValue(r, type.ofType, depth);
  if (r.mistake(15)) return null;
  if (isListType(type)) return Array.from({ length: r.int(0, 4) }, () => inputValue(r, type.ofType as GraphQLInputType, depth + 1));
  if (isEnumType(type)) return r.mistake(10) ? 'NOT_A_VALUE' : r.pick(type.getValues().map((v) => v.name));
  if (isInputObjectType(type)) {
    if (depth > 4) return {};
    const out: Record<string, unknown> = {};
    for (const field of Object.values(type.getFields())) {
      if (isNonNullType(field.type) || r.oneIn(2)) out[field.name] = inputValue(r, field.type, depth + 1);
    }
    if (r.mistake(10)) out[r.pick(['unknownField', '__proto__', 'id'])] = r.pick(POOLS.json);
    return out;
  }
  switch (isScalarType(type) ? type.name : '') {
    case 'ID': return r.careful ? r.pick(KNOWN_IDS) : r.pick(POOLS.id);
    case 'Int': return r.pick(POOLS.int);
    case 'Float': return r.pick(POOLS.float);
    case 'Boolean': return r.oneIn(2);
    case 'DateTime': return r.pick(POOLS.dateTime);
    default: return r.pick(POOLS.string);
  }
}

/** A value as a GraphQL literal, written inline in the document. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'object') {
    return `{ ${Object.entries(value).map(([k, v]) => `${/^[_A-Za-z][_0-9A-Za-z]*$/.test(k) ? k : 'bad'}: ${literal(v)}`).join(', ')} }`;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(String(value));
}

// ------------------------------------------------------------------------------------------------------
// Operations built from the schema
// ------------------------------------------------------------------------------------------------------

interface Built {
  document: string;
  variables: Record<string, unknown>;
}

type Variables = Map<string, { type: string; value: unknown }>;

const DIRECTIVES = ['@skip(if: false)', '@include(if: true)', '@skip(if: true)', '@include(if: $flag)', '@deprecated', '@nope', '@skip'];

/** A selection set over an object type: real fields (sometimes unknown ones), arguments, aliases, directives. */
function selection(r: Rng, type: GraphQLObjectType, depth: number, vars: Variables): string {
  const fields = Object.values(type.getFields());
  const parts = Array.from({ length: r.int(1, 4) }, () => (r.mistake(40)
    ? r.pick(['nope', '__typename', '__schema { types { name } }', 'id', '...on Nope { id }'])
    : fieldText(r, r.pick(fields), depth, vars)));
  return `{ ${parts.join(' ')} }`;
}

function fieldText(r: Rng, field: GraphQLField<unknown, unknown>, depth: number, vars: Variables): string {
  let out = r.oneIn(8) ? `a${r.int(0, 99)}: ${field.name}` : field.name;
  const args = field.args.filter((a) => isNonNullType(a.type) || r.oneIn(2));
  if (args.length) out += `(${args.map((a) => `${a.name}: ${argumentText(r, a, vars)}`).join(', ')})`;
  if (r.mistake(10)) out += ' ' + Array.from({ length: r.int(1, 3) }, () => r.pick(DIRECTIVES)).join(' ');
  const named = getNamedType(field.type);
  // Now and then a selection where none belongs, or none where one must be.
  if (r.mistake(30)) return isObjectType(named) ? out : `${out} { id }`;
  if (!isObjectType(named)) return out;
  return `${out} ${depth > 0 ? selection(r, named, depth - 1, vars) : '{ __typename }'}`;
}

/** An argument inline, or through a variable declared with its type (or a wrong one). */
function argumentText(r: Rng, arg: GraphQLArgument, vars: Variables): string {
  const value = inputValue(r, arg.type);
  if (r.oneIn(2)) return literal(value);
  const name = `v${vars.size}`;
  vars.set(name, { type: r.mistake(10) ? r.pick(['String', 'Int!', '[ID!]!', 'Nope', 'Boolean']) : String(arg.type), value });
  return `$${name}`;
}

function buildOperation(r: Rng): Built {
  const kind = r.mistake(8) ? 'subscription' : r.pick(['query', 'query', 'query', 'mutation']);
  const root = (kind === 'mutation' ? schema.getMutationType() : schema.getQueryType())!;
  const vars: Variables = new Map();
  const body = selection(r, root, r.int(0, 4), vars);
  const declarations = [...vars].map(([name, v]) => `$${name}: ${v.type}`);
  const variables: Record<string, unknown> = Object.fromEntries([...vars].map(([name, v]) => [name, v.value]));
  if (body.includes('$flag')) {
    declarations.push('$flag: Boolean!');
    variables.flag = r.oneIn(2) ? r.oneIn(2) : r.pick(POOLS.json);
  }
  const named = r.oneIn(2) ? ` Op${r.int(0, 9)}` : '';
  // Variables left out, or extra ones.
  if (r.mistake(10)) delete variables[r.pick(['v0', 'v1', 'flag'])];
  if (r.mistake(10)) variables.extra = r.pick(POOLS.json);
  return { document: `${kind}${named}${declarations.length ? `(${declarations.join(', ')})` : ''} ${body}`, variables };
}

const operation: fc.Arbitrary<Built> = fc.noShrink(fc.integer()).map((seed) => buildOperation(new Rng(seed)));

/** A document's text broken: cut, with a chunk removed, repeated or replaced by punctuation. */
const broken: fc.Arbitrary<Built> = fc.tuple(operation, fc.nat(), fc.nat(), fc.constantFrom('cut', 'remove', 'repeat', 'insert')).map(([op, a, b, how]) => {
  const d = op.document;
  const i = a % (d.length + 1);
  const j = i + (b % 20);
  const chunk = d.slice(i, j);
  const punctuation = ['{', '}', '(', ')', '[', ']', ':', '$', '@', '...', '!', '=', '|', '"', '"""', '#', ',', '\\u'][b % 18];
  const document = how === 'cut' ? d.slice(0, i) : how === 'remove' ? d.slice(0, i) + d.slice(j) : how === 'repeat' ? d.slice(0, j) + chunk.repeat(b % 50) + d.slice(j) : d.slice(0, i) + punctuation + d.slice(i);
  return { document, variables: op.variables };
});

const garbage: fc.Arbitrary<Built> = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.array(fc.constantFrom('{', '}', '(', ')', '[', ']', ':', '$a', '@skip', '...', '!', '=', 'query', 'mutation', 'fragment', 'on',
    'me', 'projects', 'id', '"s"', '1', '1.5e9', 'true', 'null', '#c\n', 'a:', 'nodes'), { maxLength: 80 }).map((parts) => parts.join(' ')),
).map((document) => ({ document, variables: {} }));

/** Shapes no client sends by mistake: deep nesting, many aliases, many directives, long lists, fragments that loop. */
const extreme: fc.Arbitrary<Built> = fc.oneof(
  fc.integer({ min: 1, max: 2500 }).map((n) => `{ ${'me { '.repeat(n)}id${' }'.repeat(n)} }`),
  fc.integer({ min: 1, max: 40 }).map((n) => `{ projects { nodes { templates { ${'slices { '.repeat(n)}id${' }'.repeat(n)} } } } }`),
  fc.integer({ min: 1, max: 3000 }).map((n) => `{ projectsStatistics(ids: ${'['.repeat(n)}"x"${']'.repeat(n)}) { answered } }`),
  fc.integer({ min: 1, max: 120 }).map((n) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: me { id }`).join(' ')} }`),
  fc.integer({ min: 1, max: 400 }).map((n) => `{ me { id ${'@skip(if: false) '.repeat(n)}} }`),
  fc.integer({ min: 1, max: 30 }).map((n) => `{ projects(first: ${n * 100}) { nodes { templates { documents { versions { version } } } } } }`),
  fc.constant('query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }'),
  fc.constant('{ __schema { types { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } } }'),
  fc.integer({ min: 1, max: 5000 }).map((n) => `{ me { id } } ${'#'.repeat(n)}`),
  fc.integer({ min: 1, max: 200 }).map((n) => Array.from({ length: n }, (_, i) => `query Q${i} { me { id } }`).join(' ')),
).map((document) => ({ document, variables: {} }));

// ------------------------------------------------------------------------------------------------------
// HTTP: methods, headers, bodies
// ------------------------------------------------------------------------------------------------------

const documents = fc.oneof({ arbitrary: operation, weight: 10 }, { arbitrary: broken, weight: 3 }, { arbitrary: garbage, weight: 1 }, { arbitrary: extreme, weight: 2 });

/** Mostly a caller who may use the API; else a plain member, no token, or a bad one. */
const authorization = (i: number, garbageToken: string): string | undefined =>
  i < 16 ? `Bearer ${tokens[0]}` : [`Bearer ${tokens[1]}`, undefined, `Bearer ${garbageToken}`, `Basic ${garbageToken}`, 'Bearer', `Bearer ${tokens[0]}x`][i - 16];

const ACCEPTS = [undefined, '*/*', 'application/json', 'application/graphql-response+json', 'text/html',
  'text/html,application/xhtml+xml,*/*;q=0.8', 'text/plain', 'multipart/mixed', 'application/json;q=0, */*;q=0.1'];

const CONTENT_TYPES = ['application/json; charset=utf-8', 'text/plain', 'application/graphql', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x', 'application/json; charset=latin1', ''];

/** Mostly the common case, now and then one of `others`. */
const mostly = <T>(common: T, others: fc.Arbitrary<T>, oneIn: number) => fc.oneof({ arbitrary: fc.constant(common), weight: oneIn - 1 }, { arbitrary: others, weight: 1 });

const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.record({
  doc: documents,
  how: fc.oneof({ arbitrary: fc.constant('post'), weight: 14 }, { arbitrary: fc.constant('get'), weight: 3 }, { arbitrary: fc.constantFrom('method', 'body'), weight: 3 }),
  auth: fc.nat(21),
  garbageToken: fc.string({ maxLength: 40 }),
  accept: mostly<string | undefined>(undefined, fc.constantFrom(...ACCEPTS), 5),
  contentType: mostly('application/json', fc.constantFrom(...CONTENT_TYPES), 10),
  operationName: mostly<string | undefined>(undefined, fc.oneof(fc.constantFrom('Op1', 'Q1', ''), fc.string({ maxLength: 10 })), 8),
  extensions: mostly<unknown>(undefined, fc.oneof(anyJson, fc.constant({ persistedQuery: { version: 1, sha256Hash: 'abc' } })), 10),
  method: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  oddBody: fc.oneof(anyJson.map((v) => JSON.stringify(v)), fc.string({ maxLength: 50 }), fc.constantFrom('', '{', '[{"query":"{ me { id } }"}]', '{"query":{"a":1}}', '{"variables":"{}","query":"{ me { id } }"}')),
  variablesAsText: mostly(false, fc.constant(true), 10),
}).map((r) => {
  const headers: Record<string, string> = {};
  const auth = authorization(r.auth, r.garbageToken.replace(/[^\x21-\x7e]/g, ''));
  if (auth) headers.Authorization = auth;
  if (r.accept !== undefined) headers.Accept = r.accept;
  const payload: Record<string, unknown> = { query: r.doc.document };
  if (Object.keys(r.doc.variables).length) payload.variables = r.doc.variables;
  if (r.operationName !== undefined) payload.operationName = r.operationName;
  if (r.extensions !== undefined) payload.extensions = r.extensions;
  if (r.how === 'get') {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(payload)) params.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    if (r.variablesAsText && payload.variables) params.set('variables', String(r.oddBody));
    return { method: 'GET', path: `/graphql?${params}`, headers };
  }
  if (r.how === 'method') return { method: r.method, path: '/graphql', headers, body: r.method === 'HEAD' ? undefined : JSON.stringify(payload) };
  if (r.contentType) headers['Content-Type'] = r.contentType;
  if (r.how === 'body') return { method: 'POST', path: '/graphql', headers, body: r.oddBody };
  if (r.variablesAsText && payload.variables) payload.variables = JSON.stringify(payload.variables);
  return { method: 'POST', path: '/graphql', headers, body: JSON.stringify(payload) };
});

// ------------------------------------------------------------------------------------------------------
// What every answer must be
// ------------------------------------------------------------------------------------------------------

/** Why an answer breaks the rules, or null. */
function violation(req: FuzzRequest, res: HttpResponse): string | null {
  if (res.status >= 500) return `HTTP ${res.status}`;
  // Node's HTTP parser refuses a request line and headers over 16 KiB itself, before any middleware (no body);
  // fetch adds a few hundred bytes of headers of its own to the ones counted here.
  const headerBytes = req.path.length + Object.entries(req.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  if (res.status === 431) return headerBytes > 15 * 1024 ? null : 'HTTP 431 under the header limit';
  if (req.method === 'HEAD') return null;
  const type = res.headers.get('content-type') ?? '';
  // Apollo's landing page, which a GET asking for HTML may get.
  if (type.startsWith('text/html')) return req.method === 'GET' && /text\/html/.test(req.headers.Accept ?? '') ? null : 'HTML answer';
  if (!/json/.test(type)) return `content type "${type}"`;
  const body = res.body as { data?: unknown; errors?: Array<{ message?: unknown; extensions?: { code?: unknown } }> };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body is not an object';
  const keys = Object.keys(body).filter((k) => k !== 'data' && k !== 'errors' && k !== 'extensions');
  if (keys.length) return `keys ${keys.join(', ')}`;
  if (body.errors === undefined) return body.data && typeof body.data === 'object' ? null : 'neither data nor errors';
  if (!Array.isArray(body.errors) || body.errors.length === 0) return 'errors is not a non-empty list';
  for (const error of body.errors) {
    if (typeof error.message !== 'string') return 'error without a message';
    if (!CODES.has(String(error.extensions?.code))) return `code ${String(error.extensions?.code)}`;
  }
  if (res.status >= 400 && 'data' in body) return `HTTP ${res.status} with data`;
  return leakIn(res.text);
}

describe('/graphql under seeded fuzzing driven by the schema', () => {
  it(`answers ${RUNS} generated requests (seed ${SEED}) without a 5xx, each in GraphQL's shape with a documented code, leaking nothing`, async () => {
    const statuses = new Map<number, number>();
    let executed = 0;
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (req) => {
        const res = await request(t.url, req.method, req.path, { raw: req.body, headers: req.headers });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 200 && res.body?.data !== undefined) executed++;
        const problem = violation(req, res);
        if (problem) throw new Error(`${problem}: ${res.status} ${res.text.slice(0, 600)}`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    const summary = `${RUNS} runs, seed ${SEED}, ${executed} executed, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`;
    if (process.env.FUZZ_RUNS) console.log(`graphql fuzz: ${summary}`);
    // The checks above saw operations run as well as each kind of refusal, or the generators have gone wrong.
    expect([summary, executed >= RUNS / 6 && [400, 401, 403, 405, 415].every((status) => statuses.has(status))]).toEqual([summary, true]);
  }, 60000 + RUNS * 50);
});
