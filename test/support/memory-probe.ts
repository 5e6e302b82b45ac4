import 'reflect-metadata';
import fc from 'fast-check';
import { getOperationAST, parse, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { graphqlSchema } from '../../src/modules/schema';
import { DocumentCache, documentBytes } from '../../src/platform/graphql/document-cache';
import { compiledExecution } from '../../src/platform/graphql/executor';
import { GRAPHQL_LIMITS } from '../../src/platform/graphql/limits';

/**
 * `node --expose-gc -r test/support/swc-register.js test/support/memory-probe.ts '<job>'`: what the caches keyed by a
 * client's document hold, against the JavaScript heap, in a process of its own (a collection on demand, no test
 * runner's allocations). Prints one JSON line; test/graphql.memory.test.ts asserts on it. The documents are the
 * hostile client's of issue 31: many aliases of projects under `@skip(if: $s)` (nothing runs, everything is parsed,
 * validated and compiled), each distinct, padded with a one-token comment of any size the limit allows.
 */

interface Job {
  seed: number;
  /** Documents measured one by one against their estimate. */
  sample: number;
  /** Documents sent twice each through caches of `bounds`. */
  flood: number;
  bounds: { documents: number; compiled: number };
}

const PROJECT_FIELDS = ['id', 'name', 'organizationId', 'archived', 'createdAt', 'updatedAt', 'endOfOfferDate', 'publishedOnMarketplace'];
const TEMPLATE = 'templates { id isSlice createdAt stats { contractors contractorsAnswers } documents { id state intention versions { version subTotal discount status } } }';
const STATISTICS = 'statistics { answered mayAnswer declined contractors tenderDocuments budgets { total simulatedCost } }';

const alias = fc.record({
  first: fc.integer({ min: 1, max: 20 }),
  fields: fc.subarray(PROJECT_FIELDS, { minLength: 1 }),
  templates: fc.boolean(),
  statistics: fc.boolean(),
});
/** A hostile document: up to the alias limit, distinct by its aliases' names, a comment of any size under the document limit. */
const hostile = fc.record({
  aliases: fc.array(alias, { minLength: 1, maxLength: GRAPHQL_LIMITS.maxAliases - 2 }),
  comment: fc.integer({ min: 0, max: GRAPHQL_LIMITS.maxDocumentBytes - 8000 }),
});

function text(doc: { aliases: Array<{ first: number; fields: string[]; templates: boolean; statistics: boolean }>; comment: number }, n: number): string {
  const parts = doc.aliases.map((a, i) => `d${n}_${i}: projects(first: ${a.first}) @skip(if: $s) { nodes { ${a.fields.join(' ')}${a.templates ? ` ${TEMPLATE}` : ''}${a.statistics ? ` ${STATISTICS}` : ''} } }`);
  return `query Q($s: Boolean!) { ${parts.join(' ')} } #${'x'.repeat(doc.comment)}`;
}

const heap = () => {
  global.gc!();
  global.gc!();
  return process.memoryUsage().heapUsed;
};

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2]) as Job;
  const schema = await graphqlSchema();
  const docs = fc.sample(hostile, { seed: job.seed, numRuns: job.sample + job.flood });
  // Flat strings, as a request body's are: a string built by concatenation is flattened by its first parse, which
  // would count its copy as the caches' growth.
  const texts = docs.map((doc, n) => Buffer.from(text(doc, n), 'latin1').toString('latin1'));

  // 1. Each kind of entry against its estimate: kept in arrays, so that the heap grows by what they hold.
  const sampled = texts.slice(0, job.sample);
  let before = heap();
  const parsed: DocumentNode[] = sampled.map((t) => parse(t));
  const parsedHeap = heap() - before;
  const parsedEstimate = parsed.reduce((n, d) => n + documentBytes(d), 0);

  const gateway = compiledExecution(schema, { entries: 1_000_000, bytes: 2 ** 40 });
  const executor = (await gateway.load({ apollo: {} } as never)).executor!;
  const run = (document: DocumentNode, hash: string) => executor({
    document, operation: getOperationAST(document) as OperationDefinitionNode, request: { variables: { s: true } }, context: {}, queryHash: hash,
  } as never);
  // Seen once: graphql-js runs it, nothing is kept. Then compiled, kept: the heap grows by the compiled queries.
  for (let i = 0; i < parsed.length; i++) await run(parsed[i], `sample${i}`);
  before = heap();
  for (let i = 0; i < parsed.length; i++) await run(parsed[i], `sample${i}`);
  const compiledHeap = heap() - before;
  const compiledEstimate = gateway.stats().bytes;

  // 2. A flood through caches of the given bounds: each document twice (the second request is the one kept).
  parsed.length = 0;
  const store = new DocumentCache({ entries: 1000, bytes: job.bounds.documents });
  const flooded = compiledExecution(schema, { entries: 500, bytes: job.bounds.compiled });
  const flood = await flooded.load({ apollo: {} } as never);
  const floodTexts = texts.slice(job.sample);
  before = heap();
  for (let i = 0; i < floodTexts.length; i++) {
    for (let again = 0; again < 2; again++) {
      const key = `flood${i}`;
      const document = (await store.get(key)) ?? parse(floodTexts[i]);
      await store.set(key, document);
      await flood.executor!({ document, operation: getOperationAST(document) as OperationDefinitionNode, request: { variables: { s: true } }, context: {}, queryHash: key } as never);
    }
  }
  const floodHeap = heap() - before;
  console.log(JSON.stringify({
    parsed: { heap: parsedHeap, estimate: parsedEstimate },
    compiled: { heap: compiledHeap, estimate: compiledEstimate, entries: gateway.stats().entries },
    flood: { heap: floodHeap, documents: store.stats(), compiled: flooded.stats(), bytes: floodTexts.reduce((n, t) => n + t.length, 0) },
  }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
