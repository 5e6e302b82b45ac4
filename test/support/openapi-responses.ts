/**
 * Every answer the tests receive through `request()` (test/support/http.ts) from a documented operation is
 * checked against the committed OpenAPI document (openapi.json, which test/openapi.test.ts holds equal to the
 * served one): the status is documented for the operation, the body matches its schema (Ajv, JSON Schema
 * 2020-12 as OpenAPI 3.1 uses it) and the headers it declares required are there and well formed. A drift
 * between the service and its description fails the test whose request showed it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const OPENAPI_FILE = path.resolve(__dirname, '../../openapi.json');

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const COMPONENTS = '#/components/schemas/';

interface Route {
  method: string;
  pattern: RegExp;
  /** Path parameters in it: a literal segment wins over a parameter (`/templates/documents`). */
  params: number;
  operation: Json;
}

/** Component refs point into the document; Ajv reads them from one schema holding every component. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith(COMPONENTS)
    ? `openapi#/$defs/${v.slice(COMPONENTS.length)}` : rebase(v)]));
}

class ResponseChecker {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  private readonly routes: Route[] = [];
  private readonly validators = new Map<unknown, ValidateFunction>();

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'openapi', $defs: rebase(doc.components.schemas) as Json });
    for (const [key, item] of Object.entries<Json>(doc.paths)) {
      const servers: Json[] = item.servers ?? doc.servers ?? [{ url: '/' }];
      // An alias named on the path item is the same operations at another path.
      const served = [...servers.map((server) => server.url.replace(/\/$/, '') + key), ...(item['x-also-served-at'] ? [item['x-also-served-at'] as string] : [])];
      for (const full of served) {
        const source = full.split(/(\{\w+\})/).map((part) => (/^\{\w+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
        for (const method of METHODS.filter((m) => item[m])) {
          this.routes.push({ method, pattern: new RegExp(`^${source}$`), params: (key.match(/\{/g) ?? []).length, operation: item[method] });
        }
      }
    }
    this.routes.sort((a, b) => a.params - b.params);
  }

  private resolve(node: Json): Json {
    return typeof node.$ref === 'string' ? node.$ref.split('/').slice(1).reduce((o: Json, k: string) => o[k], this.doc) : node;
  }

  private validator(schema: unknown): ValidateFunction {
    let v = this.validators.get(schema);
    if (!v) {
      v = this.ajv.compile(rebase(schema) as Json);
      this.validators.set(schema, v);
    }
    return v;
  }

  /** The problems of an answer, empty when it matches the document or is not an answer of a documented operation. */
  check(method: string, url: string, status: number, headers: Headers, body: unknown): string[] {
    const pathname = new URL(url).pathname;
    const route = this.routes.find((r) => r.method === method.toLowerCase() && r.pattern.test(pathname));
    if (!route) return [];
    // A path this server's configuration does not route (/auth/token with the built-in provider off) is no
    // operation of this server: the router's own 404 says so.
    const said = body && typeof body === 'object' ? (body as Json).message ?? (body as Json).error_description : undefined;
    if (status === 404 && typeof said === 'string' && said.startsWith('No operation at ')) return [];
    const documented = route.operation.responses[String(status)];
    if (!documented) return [`status ${status} is not documented (documented: ${Object.keys(route.operation.responses).join(', ')})`];
    const response = this.resolve(documented);
    const problems: string[] = [];
    for (const [name, ref] of Object.entries<Json>(response.headers ?? {})) {
      const header = this.resolve(ref);
      const value = headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`header ${name} is missing`);
        continue;
      }
      const typed = header.schema?.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      const v = this.validator(header.schema);
      if (!v(typed)) problems.push(`header ${name}: ${this.ajv.errorsText(v.errors)}`);
    }
    const content = response.content as Json | undefined;
    if (!content) {
      if (body !== '' && body !== undefined) problems.push(`a body was sent where none is documented: ${JSON.stringify(body).slice(0, 200)}`);
      return problems;
    }
    const type = (headers.get('content-type') ?? '').split(';')[0].trim();
    const media = content[type];
    if (!media) return [...problems, `content type "${type}" is not documented (documented: ${Object.keys(content).join(', ')})`];
    const v = this.validator(media.schema);
    if (!v(body)) problems.push(`body: ${this.ajv.errorsText(v.errors, { dataVar: 'body' })}`);
    return problems;
  }
}

let checker: ResponseChecker | undefined;

/** Throws when an answer of a documented operation does not match the document. */
export function assertDocumentedResponse(method: string, url: string, status: number, headers: Headers, body: unknown): void {
  checker ??= new ResponseChecker(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Json);
  const problems = checker.check(method, url, status, headers, body);
  if (problems.length) {
    throw new Error(`${method} ${new URL(url).pathname} answered ${status}, which does not match openapi.json:\n  ${problems.join('\n  ')}\n`
      + `body: ${JSON.stringify(body).slice(0, 1000)}`);
  }
}
