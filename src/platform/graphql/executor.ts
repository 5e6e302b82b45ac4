import v8 from 'node:v8';
import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { execute, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { getVariableValues } from 'graphql/execution/values';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import type { GraphQLContext } from './context';
import { COMPILED_CACHE, documentBytes, SEEN_DOCUMENTS, SeenDocuments, type CacheBounds } from './document-cache';
import { inSpan } from '../telemetry/tracing';

/** Bytes a compiled query holds per character of the function graphql-jit generated (measured: 2.3 to 2.9). */
const BYTES_PER_GENERATED_CHARACTER = 3;

interface Compiled {
  query: CompiledQuery | null;
  bytes: number;
}

/**
 * graphql-jit's compilation, with the size of what it holds (the generated source, asked for with `debug`, then dropped).
 *
 * With V8's compilation cache off while it runs: graphql-jit makes its functions with `new Function(source)`, and V8
 * keeps every such source's compiled script in that cache, for as long as the process lives, whatever becomes of the
 * function (measured: 420 KB per distinct document on Node 20, 240 KB on 22 and 24; 300 distinct documents left
 * 126 MiB behind, 1 MiB with the cache off). The flag is read when V8 would store a script, so turning it off around
 * this synchronous call confines the change to graphql-jit's functions.
 */
function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): Compiled {
  let result: CompiledQuery | ExecutionResult;
  v8.setFlagsFromString('--no-compilation-cache');
  try {
    result = compileQuery(schema, document, operationName ?? undefined, { debug: true } as never);
  } finally {
    v8.setFlagsFromString('--compilation-cache');
  }
  if (!isCompiledQuery(result)) return { query: null, bytes: 64 };
  const own = result as CompiledQuery & { __DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation?: string };
  const generated = own.__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation?.length ?? 0;
  delete own.__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation;
  return { query: result, bytes: generated * BYTES_PER_GENERATED_CHARACTER + documentBytes(document) };
}

/**
 * Executes operations with graphql-jit: each distinct document is compiled once into a function over the same
 * schema and resolvers, which the dashboard's thousands of fields run through without graphql-js's per-field
 * work (argument maps, resolve infos, promise bookkeeping). What graphql-js decides before execution is left to
 * graphql-js: parsing and validation stay Apollo's, and variables are coerced by graphql-js first, so that a bad
 * variable gets graphql-js's own error (and Apollo's 400). A document graphql-jit cannot compile runs on
 * graphql-js's `execute`.
 *
 * Compiled queries are kept by the hash of their text and their operation, within `bounds`, from a document's second
 * request on (document-cache.ts): a document sent once runs on graphql-js, which compiles nothing (compiling costs
 * more than running once, and what it makes is hundreds of kilobytes for a large document).
 *
 * Apollo Server takes another executor only from a gateway: this one has a fixed schema and no other duty.
 */
export function compiledExecution(schema: GraphQLSchema, bounds: CacheBounds = COMPILED_CACHE): GatewayInterface & { stats(): { entries: number; bytes: number } } {
  const seen = new SeenDocuments(SEEN_DOCUMENTS);
  const compiled = new LRUCache<string, Compiled>({ max: bounds.entries, maxSize: bounds.bytes, sizeCalculation: (c) => c.bytes });

  const compiledFor = (queryHash: string, document: DocumentNode, operationName: string | null): CompiledQuery | null => {
    const key = `${operationName ?? ''}:${queryHash}`;
    const known = compiled.get(key);
    if (known) return known.query;
    if (!seen.again(key)) return null;
    const made = compile(schema, document, operationName);
    compiled.set(key, made);
    return made.query;
  };

  const executor: GatewayExecutor = async ({ document, operation: resolved, request, context, queryHash }) => {
    const variables = request.variables ?? {};
    // No operation of that name (Apollo leaves it to the executor to say so): graphql-js's own error.
    if (!resolved) return execute({ schema, document, contextValue: context, variableValues: variables, operationName: request.operationName });
    const operation = resolved as OperationDefinitionNode;
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables, { maxErrors: 50 });
    if (coerced.errors) return { errors: coerced.errors };
    // The operation Apollo resolved, by its own name (a request may name none, or send an empty name for it).
    const operationName = operation.name?.value ?? null;
    const query = compiledFor(queryHash, document, operationName);
    const run = async (contextValue: GraphQLContext): Promise<ExecutionResult> => {
      if (!query) return execute({ schema, document, contextValue, variableValues: variables, operationName });
      const result: ExecutionResult = await query.query(undefined, contextValue, variables);
      return result.errors ? { ...result, errors: result.errors.map(asGraphQLJsError) } : result;
    };
    // Where it reads, once its kind is known (src/platform/graphql/context.ts): a replica may serve a query.
    const own = context as GraphQLContext;
    // The operation's span (docs/tracing.md): graphql-jit runs the resolvers, which the graphql instrumentation
    // never sees; the loaders' batches and their statements nest under it.
    const type = operation.operation;
    return inSpan(`${type} ${operationName ?? '(anonymous)'}`, { 'graphql.operation.type': type, 'graphql.operation.name': operationName ?? '' }, async () => {
      own.routing?.begin(type, own);
      const result = await run(own);
      const again = own.routing?.retry(result, own);
      return again ? run(again) : result;
    });
  };

  let listener: Parameters<GatewayInterface['onSchemaLoadOrUpdate']>[0] | null = null;
  return {
    /** What the compiled queries' cache holds, as it counts it (test/graphql.memory.test.ts). */
    stats: () => ({ entries: compiled.size, bytes: compiled.calculatedSize }),
    onSchemaLoadOrUpdate(callback) {
      listener = callback;
      return () => { listener = null; };
    },
    async load() {
      listener?.({ apiSchema: schema, coreSupergraphSdl: '' });
      return { executor };
    },
    async stop() {},
  };
}

/**
 * graphql-jit's errors are GraphQLErrors with read-only fields; plugins (graphql-armor's suggestion masking)
 * rewrite messages as graphql-js allows: the same error as graphql-js's own, its locations as graphql-jit found them.
 */
function asGraphQLJsError(error: GraphQLError): GraphQLError {
  const own = new GraphQLError(error.message, { path: error.path, originalError: error.originalError, extensions: error.extensions });
  (own as { locations?: GraphQLError['locations'] }).locations = error.locations;
  return own;
}
