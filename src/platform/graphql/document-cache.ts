import type { ApolloServerOptions, BaseContext } from '@apollo/server';
import type { DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';

/**
 * The caches keyed by a client's document (docs/decisions.md, "Memory"): Apollo's parsed and validated documents
 * here, graphql-jit's compiled queries in executor.ts. Both follow the same two rules, so that memory is bounded by
 * construction whatever clients send:
 *
 * - **a document is kept from its second request on.** A front end sends the same few documents again and again; a
 *   client that sends each document once (a different comment each time) costs no cache at all. Which documents were
 *   seen is remembered by hash only (`SeenDocuments`).
 * - **each cache is bounded by entries and by bytes it really holds**, estimated from what was measured on V8
 *   (test/graphql.memory.test.ts checks the estimates against the heap): a parsed document holds its source text and
 *   ~320 bytes per AST node (node, location, tokens); a compiled query ~2.4 bytes per character of the function
 *   graphql-jit generated (the function, its closures and resolve infos), plus its document.
 */

/** Bytes a parsed document holds besides its source, per AST node (measured: 287 to 380). */
const BYTES_PER_NODE = 400;

/** AST nodes of a document: one pass over its objects, no recursion. */
function nodeCount(document: DocumentNode): number {
  let nodes = 0;
  const pending: unknown[] = [document];
  while (pending.length) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      for (const v of value) pending.push(v);
    } else if (value !== null && typeof value === 'object' && 'kind' in value) {
      nodes++;
      for (const key in value) {
        if (key === 'loc') continue;
        const child = (value as Record<string, unknown>)[key];
        if (child !== null && typeof child === 'object') pending.push(child);
      }
    }
  }
  return nodes;
}

/** Bytes a parsed document holds: its source (two bytes a character where V8 cannot store it in one) and its nodes. */
export function documentBytes(document: DocumentNode): number {
  const source = document.loc?.source.body ?? '';
  // eslint-disable-next-line no-control-regex
  const width = /[^\x00-\xff]/.test(source) ? 2 : 1;
  return source.length * width + nodeCount(document) * BYTES_PER_NODE;
}

/** Hashes of documents seen once: a few dozen bytes each, a bounded number of them. */
export class SeenDocuments {
  private readonly seen: LRUCache<string, true>;

  constructor(max: number) {
    this.seen = new LRUCache({ max });
  }

  /** Whether `key` was seen before; remembers it either way. */
  again(key: string): boolean {
    if (this.seen.has(key)) return true;
    this.seen.set(key, true);
    return false;
  }
}

export interface CacheBounds {
  entries: number;
  bytes: number;
}

const DOCUMENT_CACHE: CacheBounds = { entries: 1000, bytes: 16 * 2 ** 20 };
export const COMPILED_CACHE: CacheBounds = { entries: 500, bytes: 48 * 2 ** 20 };
/** Hashes of documents seen once, for each of the two caches. */
export const SEEN_DOCUMENTS = 10_000;

/**
 * Apollo's document store (`documentStore`): parsed and validated documents by the hash of their text, from their
 * second request on, within DOCUMENT_CACHE. (Apollo's default store bounds its 30 MiB by the documents' JSON, which
 * leaves out their source text: a one-token comment of 1 MB cost 1 MB a request, unbounded.)
 */
export class DocumentCache implements NonNullable<ApolloServerOptions<BaseContext>['documentStore']> {
  private readonly seen = new SeenDocuments(SEEN_DOCUMENTS);
  private readonly documents: LRUCache<string, DocumentNode>;

  constructor(bounds: CacheBounds = DOCUMENT_CACHE) {
    this.documents = new LRUCache({ max: bounds.entries, maxSize: bounds.bytes, sizeCalculation: documentBytes });
  }

  async get(key: string): Promise<DocumentNode | undefined> {
    return this.documents.get(key);
  }

  async set(key: string, document: DocumentNode): Promise<void> {
    if (this.seen.again(key)) this.documents.set(key, document);
  }

  async delete(key: string): Promise<boolean> {
    return this.documents.delete(key);
  }

  /** What it holds, for the memory test and the metrics. */
  stats(): { entries: number; bytes: number } {
    return { entries: this.documents.size, bytes: this.documents.calculatedSize };
  }
}
