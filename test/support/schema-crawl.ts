import {
  buildClientSchema, getIntrospectionQuery, getNamedType, isLeafType, isNonNullType, isObjectType, type GraphQLField,
  type GraphQLObjectType, type GraphQLSchema, type IntrospectionQuery,
} from 'graphql';
import { gql } from './graphql';

/**
 * Crawls every query a schema offers, as a normalized cache would meet its answers: each Query field with the
 * arguments given for it, each object field below it (every type at most once on a path, down to `maxDepth`),
 * `id` and `__typename` on every object. Built from introspection alone, so it runs against any version of the
 * schema. A query the service refuses for its limits (depth, cost, tokens) is split into one query per field.
 */
export interface CrawlOptions {
  /** Argument sets per Query field; a field with required arguments and no entry here is left out. */
  rootArguments: Record<string, Array<Record<string, unknown>>>;
  maxDepth?: number;
}

export interface CrawlResult {
  /** Every `id` met, with the `__typename`s it came under. */
  typenamesById: Map<string, Set<string>>;
  /** Objects met (with an `id`), per `__typename`. */
  objectsByType: Map<string, number>;
  /** Queries sent, and Query fields crawled. */
  queries: number;
  rootFields: string[];
  /** Errors the service answered (NOT_FOUND for an id of the list the caller may not see, ...). */
  errors: string[];
}

interface Node {
  field: string;
  children: Node[];
  /** Whether this object type has an `id` field. */
  hasId: boolean;
  leaf: boolean;
}

function tree(type: GraphQLObjectType, path: Set<string>, depth: number, maxDepth: number): Node[] {
  const nodes: Node[] = [];
  for (const field of Object.values(type.getFields())) {
    if (field.args.some((a) => isNonNullType(a.type))) continue;
    const named = getNamedType(field.type);
    if (isLeafType(named)) {
      nodes.push({ field: field.name, children: [], hasId: false, leaf: true });
    } else if (isObjectType(named) && !path.has(named.name) && depth < maxDepth) {
      const children = tree(named, new Set([...path, named.name]), depth + 1, maxDepth);
      nodes.push({ field: field.name, children, hasId: 'id' in named.getFields(), leaf: false });
    }
  }
  return nodes;
}

function print(nodes: Node[]): string {
  return `{ __typename ${nodes.map((n) => (n.leaf ? n.field : `${n.field} ${print(n.children)}`)).join(' ')} }`;
}

/** The same tree cut into smaller ones: the scalars with each object field on its own. */
function split(nodes: Node[]): Node[][] {
  const leaves = nodes.filter((n) => n.leaf);
  const objects = nodes.filter((n) => !n.leaf);
  if (!objects.length) return [];
  if (objects.length === 1) return split(objects[0].children).map((children) => [...leaves, { ...objects[0], children }]);
  return objects.map((o) => [...leaves, o]);
}

function collect(value: unknown, into: CrawlResult): void {
  if (Array.isArray(value)) {
    for (const item of value) collect(item, into);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  if (typeof record.__typename === 'string' && typeof record.id === 'string') {
    const set = into.typenamesById.get(record.id) ?? new Set<string>();
    set.add(record.__typename);
    into.typenamesById.set(record.id, set);
    into.objectsByType.set(record.__typename, (into.objectsByType.get(record.__typename) ?? 0) + 1);
  }
  for (const v of Object.values(record)) collect(v, into);
}

function variableType(field: GraphQLField<unknown, unknown>, name: string): string {
  return field.args.find((a) => a.name === name)!.type.toString();
}

export async function introspect(url: string, token: string): Promise<GraphQLSchema> {
  const res = await gql(url, token, getIntrospectionQuery());
  if (res.status !== 200 || res.body.errors) throw new Error(`introspection: ${res.status} ${res.text.slice(0, 300)}`);
  return buildClientSchema(res.body.data as IntrospectionQuery);
}

export async function crawl(url: string, token: string, opts: CrawlOptions): Promise<CrawlResult> {
  const schema = await introspect(url, token);
  const maxDepth = opts.maxDepth ?? 8;
  const result: CrawlResult = { typenamesById: new Map(), objectsByType: new Map(), queries: 0, rootFields: [], errors: [] };
  const queryType = schema.getQueryType()!;

  const send = async (field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, nodes: Node[] | null): Promise<void> => {
    const names = Object.keys(args);
    const header = names.length ? `(${names.map((n) => `$${n}: ${variableType(field, n)}`).join(', ')})` : '';
    const call = names.length ? `(${names.map((n) => `${n}: $${n}`).join(', ')})` : '';
    const query = `query Crawl${header} { ${field.name}${call} ${nodes ? print(nodes) : ''} }`;
    result.queries++;
    const res = await gql(url, token, query, args);
    const refusedForLimits = res.status === 400 && nodes;
    if (refusedForLimits) {
      const parts = split(nodes);
      if (!parts.length) throw new Error(`crawl: ${field.name} refused and cannot be split: ${res.text.slice(0, 300)}`);
      for (const part of parts) await send(field, args, part);
      return;
    }
    if (res.status !== 200) throw new Error(`crawl: ${field.name}: ${res.status} ${res.text.slice(0, 300)}`);
    for (const e of res.body.errors ?? []) result.errors.push(`${field.name}: ${e.extensions?.code} ${e.message}`);
    collect(res.body.data, result);
  };

  for (const field of Object.values(queryType.getFields())) {
    const required = field.args.filter((a) => isNonNullType(a.type));
    const sets = opts.rootArguments[field.name] ?? (required.length ? [] : [{}]);
    if (!sets.length) continue;
    result.rootFields.push(field.name);
    const named = getNamedType(field.type);
    const nodes = isObjectType(named) ? tree(named, new Set([named.name]), 1, maxDepth) : null;
    for (const args of sets) await send(field, args, nodes);
  }
  return result;
}

/** Ids found under more than one `__typename`, with those typenames. */
export function idsUnderSeveralTypenames(result: CrawlResult): Array<[string, string[]]> {
  return [...result.typenamesById].filter(([, types]) => types.size > 1).map(([id, types]) => [id, [...types].sort()]);
}
