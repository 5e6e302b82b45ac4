import http from 'node:http';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { DEMO_IDS, DEMO_PASSWORD, DEMO_USERS } from '../../src/seed/demo-data';
import { signedFileUrl } from '../../src/modules/documents/file-url';
import { startTestApp, type TestApp } from '../support/app';
import { tokenFor } from '../support/auth';
import { INTERNALS, leakIn } from '../support/leaks';

/*
 * Seeded fuzzing of the REST interface, driven by the OpenAPI document the service serves: every operation
 * gets random and hostile path parameters, query strings, bodies (built from its schemas, then broken),
 * methods, content types, encodings and tokens. Whatever is sent, the answer is never a 5xx, an error is
 * in the REST shape of decisions.md section 2 with `code` equal to the HTTP status, and nothing internal
 * shows. Two promises of docs/decisions.md are checked on the way: a query parameter an operation does not
 * declare never succeeds, and a signed download URL written otherwise than the service wrote it is never
 * served. The token endpoint is fuzzed likewise against its OAuth 2 shape.
 *
 * Failures are collected, not shrunk: the run reports how many of each kind, with one example each.
 * FUZZ_RUNS sets the number of REST cases (the token endpoint gets a tenth); FUZZ_SEED the seed.
 * `npm run fuzz` runs many more than `npm test`.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
/** Room for a loaded machine: about 10 ms a case is usual. */
const TIMEOUT_MS = Math.max(120_000, RUNS * 60);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Operation {
  name: string;
  method: string;
  path: string;
  pathParams: Array<{ name: string; schema: Schema }>;
  query: Array<{ name: string; schema: Schema }>;
  body?: Schema;
  /** An operation of the OpenAPI document (not a reference page asset or a file URL). */
  documented: boolean;
}

interface Case {
  op: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** A signed download URL written otherwise than the service wrote it: it must not be served. */
  altered?: boolean;
  /** Carries a query parameter the operation does not declare: it must not succeed. */
  unknownQuery?: boolean;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

let t: TestApp;
let base: URL;
let doc: Schema;
let operations: Operation[];
const tokens: Record<string, string> = {};
/** Download URLs as the service signs them, taken apart. */
let signed: SignedUrl[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

beforeAll(async () => {
  t = await startTestApp();
  base = new URL(t.url);
  for (const [key, email] of Object.entries(DEMO_USERS)) tokens[key] = await tokenFor(t.url, email);
  doc = JSON.parse((await send({ op: 'openapi', method: 'GET', path: '/api/svc/v1/openapi.json', headers: {} })).text);
  operations = operationsOf(doc);
  const files = await t.orm.em.fork().getConnection().execute<Array<{ id: string }>>('select id from document_file order by id limit 5');
  signed = files.map((f) => {
    const [, id, expires, signature] = /\/files\/([^?]+)\?expires=(\d+)&signature=(.+)$/.exec(signedFileUrl(t.config, f.id).url)!;
    return { id, expires, signature, swapped: false, slash: false, tail: '' };
  });
});
afterAll(async () => {
  agent.destroy();
  await t.close();
});

/** One raw HTTP request: node:http sends what fetch would refuse (a body on GET, any method, any header). */
function send(c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...c.headers, ...(c.body ? { 'Content-Length': String(c.body.length) } : {}) };
    const req = http.request({ host: base.hostname, port: base.port, method: c.method, path: c.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', reject);
    req.end(c.body);
  });
}

const resolveRef = (schema: Schema | undefined): Schema | undefined =>
  schema?.$ref ? { ...doc.components.schemas[String(schema.$ref).split('/').pop()!], ...schema, $ref: undefined } : schema;

function operationsOf(openapi: Schema): Operation[] {
  const ops: Operation[] = [];
  for (const [key, item] of Object.entries<Schema>(openapi.paths)) {
    // The token endpoint answers in OAuth 2's shape: fuzzed on its own below.
    if (key === '/auth/token') continue;
    // An operation served at two prefixes is one path item with path-level servers: both are fuzzed.
    const paths = ((item.servers ?? [{ url: '/' }]) as Array<{ url: string }>).map((server) => server.url.replace(/\/$/, '') + key);
    for (const [path, [method, op]] of paths.flatMap((p) => Object.entries<Schema>(item).filter(([m]) => m !== 'servers').map((entry) => [p, entry] as const))) {
      const params = (op.parameters ?? []) as Array<{ name: string; in: string; schema: Schema }>;
      ops.push({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path'),
        query: params.filter((p) => p.in === 'query'),
        body: resolveRef(op.requestBody?.content?.['application/json']?.schema),
        documented: true,
      });
    }
  }
  const segment = { type: 'string' };
  ops.push(
    { name: 'GET /api/svc/v1/docs/{asset}', method: 'GET', path: '/api/svc/v1/docs/{asset}', pathParams: [{ name: 'asset', schema: segment }], query: [], documented: false },
    { name: 'GET /files/{fileId}', method: 'GET', path: '/files/{fileId}', pathParams: [{ name: 'fileId', schema: { type: 'string', format: 'uuid' } }], query: [{ name: 'expires', schema: segment }, { name: 'signature', schema: segment }], documented: false },
    { name: 'GET /api/svc/v1/{unknown}', method: 'GET', path: '/api/svc/v1/{unknown}', pathParams: [{ name: 'unknown', schema: segment }], query: [], documented: false },
  );
  return ops;
}

// ---------------------------------------------------------------------------------------------------------
// Values

const { projects: PRJ, projectTrades: PTR, tradeListTrades: TLT, templates: TPL, documents: DOC, organizations: ORG, users: USR, contractors: CTR, tradeLists: TL } = DEMO_IDS;
const all = (o: object): string[] => Object.values(o).flatMap((v) => (typeof v === 'string' ? [v] : all(v)));

/** Ids that name demo records, per parameter name, so that requests reach the handlers beyond their 404s. */
const KNOWN: Record<string, string[]> = {
  project_id: all(PRJ),
  trade_id: [...all(PTR.residence), ...all(PTR.school), ...all(TLT)],
  template_id: all(TPL),
  document_id: all(DOC),
  organization_id: [...all(ORG), DEMO_IDS.headquarter],
  headquarter_id: [DEMO_IDS.headquarter, ORG.atelierDemo],
  user_id: all(USR),
  contractor_id: all(CTR),
  trade_list_id: all(TL),
  siret: ['73282932000074', '55210055400013', '12345678901234'],
  trade_name: ['Gros œuvre', 'gros oeuvre', 'Électricité', 'Plomberie'],
  version: ['1', '2', '3'],
  asset: ['swagger-ui.css', 'swagger-ui-bundle.js', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'index.html', 'package.json', '..%2Fpackage.json', '%2e%2e'],
  file_id: [],
};
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Strings that have broken services before: prototype names, numbers in disguise, control and odd Unicode characters. */
const HOSTILE = [
  '', ' ', '   ', '\t\n', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'prototype', 'null', 'undefined', 'true', '0',
  '-1', '01', '1.5', '1e3', '1e309', 'NaN', 'Infinity', '0x10', '.', '..', '\u0000', 'a\u0000b', "' or 1=1 --", '"; drop table project; --',
  '\\', '%', '%25', '😀', 'e\u0301', '\u202e', '\ufeff', '\u200b', '\ud800', 'Ǆ', 'ß', 'İ', '<script>alert(1)</script>', '{}', '[]',
  '9'.repeat(40), '00000000-0000-0000-0000-000000000000', 'DE000000-0000-4000-8000-000100000001', '{de000000-0000-4000-8000-000100000001}',
  'de000000-0000-4000-8000-00010000000', 'x'.repeat(300), 'é'.repeat(5000),
];

const MAX_REPEAT = 3;

/**
 * Any UTF-16 code units, lone surrogates and astral characters included. fast-check's `unit: 'binary'`
 * would do it, but builds its table of code points for seconds first.
 */
const codeUnits = (minLength: number, maxLength: number) => fc.array(fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
), { minLength, maxLength }).map((units) => units.join(''));

/** A draw of the generator: all random choices of a case come from it, hence from the seed. */
class Draw {
  constructor(private readonly g: fc.GeneratorValue) {}
  int(min: number, max: number): number {
    return this.g(fc.integer, { min, max });
  }
  chance(percent: number): boolean {
    return this.int(0, 99) < percent;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }
  string(maxLength = 20): string {
    return this.pick([
      () => this.g(fc.string, { maxLength }),
      () => this.g(fc.string, { maxLength, unit: 'grapheme-ascii' }),
      () => this.g(codeUnits, 0, maxLength),
      () => this.pick(HOSTILE),
    ])();
  }
  uuid(): string {
    return this.g(fc.uuid, {});
  }
  json(): Json {
    return this.g(fc.jsonValue, { maxDepth: 3 }) as Json;
  }
  email(): string {
    return this.g(fc.emailAddress, {});
  }
  matching(source: string): string {
    return this.g(fc.stringMatching, new RegExp(source), { size: 'xsmall' });
  }
  /** Any UTF-16 code units, lone surrogates included. */
  unicode(): string {
    return this.g(codeUnits, 1, 30);
  }
}

/** A value the schema accepts, mostly; demo ids where the field names a record. */
function valid(d: Draw, schema: Schema | undefined, name: string, depth = 0): Json {
  schema = resolveRef(schema) ?? {};
  if (schema.enum) return d.pick(schema.enum as Json[]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type ?? (schema.properties ? 'object' : 'string');
  switch (type) {
    case 'object': {
      const out: { [key: string]: Json } = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [key, sub] of Object.entries<Schema>(schema.properties ?? {})) {
        if (required.has(key) || d.chance(50)) out[key] = depth > 4 ? null : valid(d, sub, key, depth + 1);
        else if (d.chance(20)) out[key] = null;
      }
      return out;
    }
    case 'array': {
      const n = d.int(schema.minItems ?? 0, Math.min(schema.maxItems ?? MAX_REPEAT, MAX_REPEAT));
      return Array.from({ length: n }, () => (depth > 4 ? [] : valid(d, schema!.items, name, depth + 1)));
    }
    case 'number':
    case 'integer': {
      const min = schema.minimum ?? -1e6;
      const max = schema.maximum ?? 1e6;
      return type === 'integer' ? d.int(Math.ceil(min), Math.floor(max)) : d.pick([min, max, Math.round(((min + max) / 2) * 100) / 100, d.int(Math.ceil(min), Math.min(Math.floor(max), 1e6))]);
    }
    case 'boolean':
      return d.chance(50);
    default:
      return validString(d, schema, name);
  }
}

function validString(d: Draw, schema: Schema, name: string): string {
  const known = KNOWN[name] ?? KNOWN[snake(name)];
  if (known?.length && d.chance(80)) return d.pick(known);
  if (schema.format === 'uuid') return d.uuid();
  if (schema.format === 'email') return d.email();
  if (schema.format === 'date' || /date/.test(name)) return d.pick(['2026-11-21', '2026-12-01T00:00:00', '0001-01-01', '9999-12-31', '2026-02-29']);
  if (schema.pattern) return d.matching(schema.pattern as string);
  if (name === 'limit') return String(d.int(0, 600));
  const text = d.string(Math.min(schema.maxLength ?? 40, 40));
  return text.length >= (schema.minLength ?? 0) ? text : 'Lot';
}

/** Marks a string to be written into the JSON text as it is: numbers JSON.stringify cannot write. */
const RAW = '\u0001raw:';
const RAW_NUMBERS = ['1e400', '-1e400', '123456789012345678901234567890', '0.0000000000000000000000000001', '-0', '1E2', '1.0'];

/** Every place in a JSON value a mutation may change: [parent, key] pairs. */
function slots(value: Json, out: Array<[Json[] | { [key: string]: Json }, string | number]> = []) {
  if (Array.isArray(value)) value.forEach((v, i) => { out.push([value, i]); slots(v, out); });
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) { out.push([value, k]); slots(v, out); }
  return out;
}

function nest(depth: number, leaf: Json, asArray: boolean): Json {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

/** Breaks a valid value in one of the ways callers (and attackers) do. */
function mutate(d: Draw, root: Json): Json {
  const places = slots(root);
  const kind = d.pick(['type', 'drop', 'extra', 'huge', 'nul', 'unicode', 'deep', 'array', 'raw', 'hostile', 'null']);
  if (!places.length || (kind === 'extra' && root && typeof root === 'object' && !Array.isArray(root) && d.chance(50))) {
    if (root && typeof root === 'object' && !Array.isArray(root)) {
      root[d.pick(['comment', 'id', 'constructor', 'to_string', 'value_of', 'x', 'Name', 'name ', 'NAME', '', d.string(10)])] = d.json();
    }
    return root;
  }
  const [parent, key] = d.pick(places);
  const set = (v: Json) => { (parent as Record<string | number, Json>)[key] = v; };
  switch (kind) {
    case 'type': set(d.json()); break;
    case 'drop': if (Array.isArray(parent)) parent.splice(Number(key), 1); else delete parent[key]; break;
    case 'extra': if (!Array.isArray(parent)) parent[`${String(key)}_${d.int(0, 9)}`] = d.json(); else parent.push(d.json()); break;
    case 'huge': set(d.pick(['x', 'é', '😀', ' ']).repeat(d.pick([256, 5001, 70_000]))); break;
    case 'nul': set(`${d.string(5)}\u0000${d.string(5)}`); break;
    case 'unicode': set(d.unicode()); break;
    case 'deep': set(nest(d.pick([31, 33, 200]), d.json(), d.chance(50))); break;
    case 'array': set([(parent as Record<string | number, Json>)[key]]); break;
    case 'raw': set(RAW + d.pick(RAW_NUMBERS)); break;
    case 'hostile': set(d.pick(HOSTILE)); break;
    default: set(null);
  }
  return root;
}

function jsonText(value: Json): string {
  return JSON.stringify(value).replace(new RegExp(`"${RAW.replace('\u0001', '\\\\u0001')}([^"]*)"`, 'g'), '$1');
}

/** The text of a body: a schema value broken 0-3 times, or something that is no such object at all. */
function bodyText(d: Draw, schema: Schema | undefined): string {
  const shape = d.int(0, 99);
  if (shape < 65) {
    let value = valid(d, schema ?? { type: 'object', properties: {} }, 'body');
    for (let i = d.pick([0, 0, 1, 1, 2, 3]); i > 0; i--) value = mutate(d, value);
    return jsonText(value);
  }
  if (shape < 75) return d.pick(['null', '[]', '[{}]', '"x"', '1', 'true', '{}', '', ' ', '\n']);
  if (shape < 85) return d.pick(['{', '{"a":', '{"a":1,}', "{'a':1}", '{"a":1}{"b":2}', '{"a":NaN}', '{"a":undefined}', '\ufeff{}', '{"a":"\\ud800"}', '{"a":"\\x41"}', '{"\u0000":1}', `{"__proto__":{"x":1}}`, `{"constructor":{"prototype":{"x":1}}}`]);
  if (shape < 92) return JSON.stringify(nest(d.pick([33, 3000]), {}, d.chance(50)));
  if (shape < 97) return d.string(200);
  // Over the 1 MiB limit: 413.
  return JSON.stringify({ name: 'x'.repeat(1_100_000) });
}

const CONTENT_TYPES = [
  'application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1',
  'application/json; charset=utf-16', 'application/merge-patch+json', 'application/vnd.api+json', 'text/plain', 'text/json',
  'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json;;', 'json', '*/*', '',
];

/** Encodes a body, or pretends to (garbage announced as gzip, deflate or br), or names an encoding nobody supports. */
function encode(d: Draw, text: string): { body: Buffer; encoding?: string } {
  const raw = Buffer.from(text, 'utf8');
  switch (d.int(0, 19)) {
    case 0: return { body: zlib.gzipSync(raw), encoding: 'gzip' };
    case 1: return { body: zlib.deflateSync(raw), encoding: 'deflate' };
    case 2: return { body: zlib.brotliCompressSync(raw), encoding: 'br' };
    case 3: return { body: raw, encoding: d.pick(['gzip', 'deflate', 'br']) };
    case 4: return { body: zlib.gzipSync(raw).subarray(0, 12), encoding: 'gzip' };
    case 5: return { body: raw, encoding: d.pick(['identity', 'compress', 'x-gzip', 'GZIP', 'gzip, gzip', 'zstd', '', 'unknown']) };
    default: return { body: raw };
  }
}

/** A query string of valid and hostile values, sometimes with parameters the operation does not declare. */
function queryString(d: Draw, op: Operation): { query: string; unknown: boolean } {
  const parts: string[] = [];
  let unknown = false;
  for (const q of op.query) {
    if (d.chance(50)) continue;
    const value = d.chance(70) ? String(valid(d, q.schema, q.name)) : d.pick(HOSTILE);
    parts.push(`${q.name}=${enc(value)}`);
  }
  if (d.chance(op.query.length ? 25 : 15)) {
    for (let i = d.int(1, 3); i > 0; i--) {
      const known = op.query.length ? d.pick(op.query).name : 'limit';
      const part = d.pick([
        `${known}=1`, `${known}[0]=1`, `${known}[]=`, `${known}[a]=b`, `${enc(d.string(8))}=${enc(d.string(8))}`,
        '__proto__[x]=1', 'constructor=1', 'to_string=1', '%zz=1', 'a=%zz', '=x', '&', 'a', 'a=%00', `a=${'x'.repeat(4000)}`,
      ]);
      parts.push(part);
      unknown ||= part !== '&' && !(op.query.length && part === `${known}=1`);
    }
  }
  return { query: parts.length ? `?${parts.join('&')}` : '', unknown };
}

function segment(d: Draw, name: string, schema: Schema): string {
  const choice = d.int(0, 99);
  if (choice < 70) return enc(String(valid(d, schema, name)));
  if (choice < 90) return enc(d.chance(50) ? d.pick(HOSTILE) : d.string(30)) || 'x';
  return d.pick(['%zz', '%', '%E0%A4%A', '%C0%AE', '%2F', '..%2F..%2Fpackage.json', '%00', '%F0%9F%98', ';', 'a;b=c', '%20', '+']);
}

/** encodeURIComponent, except that a lone surrogate becomes its (invalid) UTF-8 bytes instead of a URIError. */
const enc = (s: string) => s.split(/([\ud800-\udfff])/).map((part) => {
  try {
    return encodeURIComponent(part);
  } catch {
    return [...Buffer.from([0xed, 0xa0 | ((part.charCodeAt(0) >> 6) & 0x1f), 0x80 | (part.charCodeAt(0) & 0x3f)])].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  }
}).join('');

interface SignedUrl {
  id: string;
  expires: string;
  signature: string;
  swapped: boolean;
  slash: boolean;
  tail: string;
}

const percent = (s: string, at: number) => `${s.slice(0, at)}%${s.charCodeAt(at).toString(16).toUpperCase()}${s.slice(at + 1)}`;

/** Ways of writing a signed URL otherwise with the same values, or nearly (decisions.md: all are 403). */
const REWRITES: Array<(u: SignedUrl, d: Draw) => SignedUrl> = [
  (u) => ({ ...u, expires: `0${u.expires}` }),
  (u) => ({ ...u, expires: `%2B${u.expires}` }),
  (u) => ({ ...u, expires: `%20${u.expires}` }),
  (u) => ({ ...u, expires: `${u.expires.slice(0, 1)}.${u.expires.slice(1)}e${u.expires.length - 1}` }),
  (u, d) => ({ ...u, expires: percent(u.expires, d.int(0, u.expires.length - 1)) }),
  (u, d) => ({ ...u, signature: percent(u.signature, d.int(0, u.signature.length - 1)) }),
  (u) => ({ ...u, signature: (u.signature[0] === 'A' ? 'B' : 'A') + u.signature.slice(1) }),
  (u) => ({ ...u, id: u.id.toUpperCase() }),
  (u, d) => ({ ...u, id: percent(u.id, d.int(0, u.id.length - 1)) }),
  (u) => ({ ...u, swapped: !u.swapped }),
  (u) => ({ ...u, slash: true }),
  (u, d) => ({ ...u, tail: `${u.tail}${d.pick(['&', '&x=1', `&expires=${u.expires}`, `&signature=${u.signature}`, '#', '&&'])}` }),
];

const signedPath = (u: SignedUrl) => {
  const params = u.swapped ? [`signature=${u.signature}`, `expires=${u.expires}`] : [`expires=${u.expires}`, `signature=${u.signature}`];
  return `/files/${u.id}${u.slash ? '/' : ''}?${params.join('&')}${u.tail}`;
};

function signedCase(d: Draw): Pick<Case, 'path' | 'altered'> {
  const issued = d.pick(signed);
  let u = issued;
  const rewrites = d.pick([0, 0, 1, 1, 2]);
  for (let i = 0; i < rewrites; i++) u = d.pick(REWRITES)(u, d);
  // Two rewrites may undo each other (swapped twice, a letter flipped back): that URL is the one issued.
  const path = signedPath(u);
  return { path, altered: path !== signedPath(issued) };
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];

function buildCase(d: Draw): Case {
  const op = d.pick(operations);
  const method = d.chance(85) ? op.method : d.pick(METHODS);
  let path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const param = op.pathParams.find((p) => p.name === name);
    return segment(d, name, param?.schema ?? { type: 'string' });
  });
  const query = queryString(d, op);
  path += query.query;
  let altered = false;
  if (op.path === '/files/{fileId}' && d.chance(60)) {
    const url = signedCase(d);
    path = url.path;
    altered = !!url.altered;
  }
  const headers: Record<string, string> = {};
  const who = d.int(0, 99);
  if (who < 65) headers.Authorization = `Bearer ${tokens.architect}`;
  else if (who < 75) headers.Authorization = `Bearer ${d.pick([tokens.other, tokens.member, tokens.noapi])}`;
  else if (who < 85) headers.Authorization = d.pick(['Bearer', 'Bearer ', 'Basic YTpi', 'bearer x.y.z', `Bearer ${tokens.architect}x`, `Bearer ${tokens.architect.split('.').slice(0, 2).join('.')}.`, `Bearer ${'a'.repeat(5000)}`]);
  let body: Buffer | undefined;
  const wantsBody = !!op.body || method === 'POST' || method === 'PUT';
  if ((wantsBody && d.chance(90)) || d.chance(8)) {
    const text = bodyText(d, op.body);
    const { body: encoded, encoding } = encode(d, text);
    body = encoded;
    const type = d.chance(75) ? 'application/json' : d.pick(CONTENT_TYPES);
    if (type) headers['Content-Type'] = type;
    if (encoding !== undefined) headers['Content-Encoding'] = encoding;
  }
  const served = method === op.method || (op.method === 'GET' && method === 'HEAD');
  return { op: op.name, method, path, headers, body, altered: altered && served, unknownQuery: query.unknown && op.documented };
}

// ---------------------------------------------------------------------------------------------------------
// What every answer must be

/** Why a REST answer breaks decisions.md section 2, or null. */
function restProblem(c: Case, a: Answer): string | null {
  if (a.status >= 500) return `${a.status}`;
  if (a.status < 100) return 'no status';
  if (a.status < 400) {
    if (c.altered) return `altered download URL answered ${a.status}`;
    if (c.unknownQuery) return `unknown query parameter accepted with ${a.status}`;
    const type = String(a.headers['content-type'] ?? '');
    if (!type.includes('json')) return null; // a served file, a stylesheet, the reference page
    return leakIn(a.text, INTERNALS);
  }
  if (c.method === 'HEAD') return null;
  if (!String(a.headers['content-type'] ?? '').includes('application/json')) return `error answered as ${a.headers['content-type']}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(a.text);
  } catch {
    return 'error body is not JSON';
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'error body is not an object';
  if (body.code !== a.status) return `code ${String(body.code)} differs from status ${a.status}`;
  if (typeof body.message !== 'string' || !body.message) return 'no message';
  const keys = Object.keys(body).filter((k) => k !== 'code' && k !== 'message').sort().join(',');
  const companyNotFound = a.status === 404 && c.op.includes('/company/') && keys === 'data,siret';
  if (keys && keys !== 'errors' && !companyNotFound) return `unexpected keys ${keys}`;
  if (keys === 'errors') {
    const errors = body.errors as unknown[];
    if (a.status !== 400 || !Array.isArray(errors) || !errors.length) return 'errors on a non-validation answer, or empty';
    for (const e of errors) {
      const item = e as Record<string, unknown>;
      if (Object.keys(item).sort().join(',') !== 'field,message' || typeof item.field !== 'string' || typeof item.message !== 'string') return 'malformed errors item';
    }
  }
  return leakIn(a.text);
}

interface Failure {
  op: string;
  problem: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  status: number;
  answer: string;
}

/** Failures grouped by operation and problem: the figure to watch is the count, the example says what to fix. */
function summary(failures: Failure[]) {
  const groups = new Map<string, { count: number; example: Failure }>();
  for (const f of failures) {
    const key = `${f.op} | ${f.problem.replace(/: .*/s, '')}`;
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { count: 1, example: f });
  }
  return [...groups.entries()].map(([key, g]) => ({ key, count: g.count, example: g.example }));
}

/** The figures of a run, printed when something failed or when asked for a number of runs (npm run fuzz). */
function report(name: string, cases: number, failures: Failure[]) {
  if (!failures.length && !process.env.FUZZ_RUNS) return;
  const fiveHundreds = failures.filter((f) => f.status >= 500).length;
  console.log(`${name} fuzz, seed ${SEED}: ${cases} cases, ${failures.length} failures, ${fiveHundreds} of them 5xx`);
}

async function check(c: Case, problemOf: (c: Case, a: Answer) => string | null, failures: Failure[]) {
  let answer: Answer;
  try {
    answer = await send(c);
  } catch (err) {
    answer = { status: 0, headers: {}, text: String(err) };
  }
  const problem = answer.status === 0 ? `no answer (${answer.text})` : problemOf(c, answer);
  if (problem) {
    failures.push({
      op: c.op, problem, method: c.method, path: c.path.slice(0, 300), headers: c.headers, status: answer.status,
      body: c.body?.subarray(0, 300).toString('utf8'), answer: answer.text.slice(0, 300),
    });
  }
}

describe('REST operations answer any request in the documented error shape', () => {
  it(`never answers 5xx, always {code, message} with code = status, nothing internal (${RUNS} seeded cases)`, async () => {
    const failures: Failure[] = [];
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        cases++;
        await check(buildCase(new Draw(g)), restProblem, failures);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    report('REST', cases, failures);
    expect(summary(failures)).toEqual([]);
  }, TIMEOUT_MS);
});

// ---------------------------------------------------------------------------------------------------------
// The token endpoint

const OAUTH_ERRORS = ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'access_denied', 'slow_down', 'temporarily_unavailable'];

/** Why a token endpoint answer breaks RFC 6749 section 5.2 (decisions.md section 3), or null. */
function oauthProblem(c: Case, a: Answer): string | null {
  if (a.status >= 500) return `${a.status}`;
  if (a.status < 400) return leakIn(a.text, INTERNALS);
  if (c.method === 'HEAD') return null;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(a.text);
  } catch {
    return 'error body is not JSON';
  }
  if (!body || typeof body !== 'object') return 'error body is not an object';
  if (Object.keys(body).sort().join(',') !== 'error,error_description') return `keys ${Object.keys(body).join(',')}`;
  if (!OAUTH_ERRORS.includes(String(body.error))) return `error ${String(body.error)}`;
  return leakIn(a.text);
}

function tokenCase(d: Draw): Case {
  const fields: Array<[string, string]> = [];
  const add = (key: string, value: string) => { if (d.chance(85)) fields.push([key, value]); };
  add('grant_type', d.pick(['password', 'password', 'refresh_token', 'client_credentials', 'PASSWORD', '', d.string(10)]));
  add('client_id', d.chance(80) ? 'svc-api' : d.string(10));
  add('username', d.chance(40) ? d.pick(Object.values(DEMO_USERS)) : d.string(30));
  // The right password seldom: each costs a slow hash, and a wrong one shows the same paths.
  add('password', d.chance(3) ? DEMO_PASSWORD : d.string(30));
  add('scope', d.pick(['svc email profile', 'svc', '', 'email', d.string(20)]));
  if (d.chance(30)) add('refresh_token', d.chance(50) ? tokens.architect : d.string(60));
  if (d.chance(15)) fields.push([d.pick(['grant_type', 'username', 'client_id', 'grant_type[]', 'username[a]', '__proto__[x]', 'constructor']), d.string(10)]);
  let text = fields.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  if (d.chance(10)) text = d.pick(['%zz', 'a=%zz', '&&&', '=', `${text}&${'a=1&'.repeat(2000)}`, '{"grant_type":"password"}', 'x'.repeat(1_100_000)]);
  const { body, encoding } = encode(d, text);
  const headers: Record<string, string> = { 'Content-Type': d.chance(85) ? 'application/x-www-form-urlencoded' : d.pick(CONTENT_TYPES) };
  if (encoding !== undefined) headers['Content-Encoding'] = encoding;
  return { op: 'POST /auth/token', method: d.chance(95) ? 'POST' : d.pick(METHODS), path: '/auth/token', headers, body };
}

describe('POST /auth/token answers any request in the OAuth 2 error shape', () => {
  const runs = Math.max(50, Math.round(RUNS / 10));
  it(`never answers 5xx, always {error, error_description} with an RFC 6749 code, nothing internal (${runs} seeded cases)`, async () => {
    const failures: Failure[] = [];
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        cases++;
        await check(tokenCase(new Draw(g)), oauthProblem, failures);
      }),
      { seed: SEED, numRuns: runs },
    );
    report('Token endpoint', cases, failures);
    expect(summary(failures)).toEqual([]);
  }, TIMEOUT_MS);
});
