import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TrustedDocumentsConfig } from '../config';
import { ConfigError } from '../env';
import { TrustedDocumentError } from '../errors/errors';
import type { AppMiddleware } from '../http/state';

/**
 * Trusted documents (docs/trusted-documents.md): the first-party front end's operations, known at build time, in the
 * manifest graphql-codegen's client preset writes with `persistedDocuments: true` (`npm run codegen`:
 * examples/graphql/generated/persisted-documents.json), `{ "sha256:<hex>": "<document>" }`. A request names one by
 * `documentId` (GraphQL over HTTP's convention) or by Apollo's `extensions.persistedQuery.sha256Hash`.
 *
 * - `off`: no manifest; a request by id is refused as before (Apollo's PERSISTED_QUERY_NOT_SUPPORTED).
 * - `allow`: ids accepted, arbitrary documents too.
 * - `only`: ids accepted; an arbitrary document is refused (TRUSTED_DOCUMENT_REQUIRED) unless the caller's email is
 *   in GRAPHQL_ARBITRARY_DOCUMENTS_USERS (the developers using the IDE against that environment).
 *
 * The settings (src/platform/config.ts) with the manifest read: what serves requests by id.
 */
export type TrustedDocumentsSettings = Omit<TrustedDocumentsConfig, 'file'> & {
  /** The manifest's documents by their sha256 (hex, without the `sha256:` prefix); null when off. */
  documents: ReadonlyMap<string, string> | null;
};

const HASH = /^(?:sha256:)?([0-9a-f]{64})$/;

/** Reads a manifest; every document's hash is computed again, and a manifest that does not match refuses the start. */
function loadTrustedDocuments(file: string): ReadonlyMap<string, string> {
  const fail = (why: string) => new ConfigError(`GRAPHQL_TRUSTED_DOCUMENTS (${file}): ${why}; regenerate it with \`npm run codegen\``);
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw fail(`not a readable JSON manifest (${(err as Error).message.split('\n')[0]})`);
  }
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) throw fail('not an object of "sha256:<hash>": "<document>"');
  const documents = new Map<string, string>();
  for (const [id, document] of Object.entries(manifest)) {
    const hash = HASH.exec(id)?.[1];
    if (!hash || typeof document !== 'string') throw fail(`the entry "${id.slice(0, 80)}" is not "sha256:<hash>": "<document>"`);
    const actual = createHash('sha256').update(document).digest('hex');
    if (actual !== hash) throw fail(`the document under "${id}" hashes to sha256:${actual}`);
    documents.set(hash, document);
  }
  if (!documents.size) throw fail('it holds no document');
  return documents;
}

/**
 * The trusted documents to serve: the settings, with the manifest they name read (once, at start, by createApp or
 * before it by src/server.ts); a manifest missing, unreadable or not matching refuses the start (ConfigError).
 */
export function readTrustedDocuments({ mode, file, arbitraryAllowed }: TrustedDocumentsConfig): TrustedDocumentsSettings {
  return { mode, documents: mode === 'off' || !file ? null : loadTrustedDocuments(file), arbitraryAllowed };
}

/** What a GraphQL request carries, whichever transport brought it. */
export interface RequestedDocument {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

/** The id a request names, from `documentId` or `extensions.persistedQuery.sha256Hash`; undefined when none. */
function requestedId(request: RequestedDocument): unknown {
  if (request.documentId !== undefined) return request.documentId;
  const extensions = request.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined;
  return extensions && typeof extensions === 'object' ? extensions.persistedQuery?.sha256Hash : undefined;
}

/**
 * The document to run for a request (the manifest's, for an id), or a TrustedDocumentError; null: the request's
 * own `query` runs as it is. One rule for POST, GET and WebSocket subscriptions.
 */
export function trustedDocumentOf(settings: TrustedDocumentsSettings, request: RequestedDocument, callerEmail: string | null): string | null {
  if (settings.mode === 'off' || !settings.documents) return null;
  const id = requestedId(request);
  if (id !== undefined && id !== null) {
    const hash = typeof id === 'string' ? HASH.exec(id)?.[1] : undefined;
    const document = hash ? settings.documents.get(hash) : undefined;
    if (!document) throw new TrustedDocumentError('PERSISTED_QUERY_NOT_FOUND', `No trusted document has the id ${JSON.stringify(id).slice(0, 80)}: the front end and the service's manifest differ`);
    if (typeof request.query === 'string' && request.query !== '' && request.query !== document) {
      throw new TrustedDocumentError('BAD_USER_INPUT', 'The request holds both a document id and another document: send one of them');
    }
    return document;
  }
  if (settings.mode === 'only' && !(callerEmail && settings.arbitraryAllowed.includes(callerEmail.toLowerCase()))) {
    throw new TrustedDocumentError('TRUSTED_DOCUMENT_REQUIRED', 'Only trusted documents run here: send the documentId of an operation of the front end\'s manifest');
  }
  return null;
}

/** A GET parameter holding JSON (`extensions`), or undefined: an unparsable one is Apollo's to refuse. */
function parsedJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A request named by id, rewritten as the request of its document: `query` set, the id gone (Apollo, whose own
 * persisted queries are off, would refuse `extensions.persistedQuery`).
 */
function resolvedById(request: Record<string, unknown>, document: string): Record<string, unknown> {
  const { documentId: _id, extensions, ...rest } = request;
  const resolved: Record<string, unknown> = { ...rest, query: document };
  const others = extensions && typeof extensions === 'object' ? Object.fromEntries(Object.entries(extensions).filter(([k]) => k !== 'persistedQuery')) : extensions;
  if (others !== undefined && !(typeof others === 'object' && others !== null && !Object.keys(others).length)) resolved.extensions = others;
  return resolved;
}

/**
 * The request named by id rewritten as the request of its document, before Apollo sees it (POST body, or GET
 * parameters); in `only` mode, an arbitrary document refused unless the caller may send one.
 */
export function trustedDocumentsRewrite(settings: TrustedDocumentsSettings): AppMiddleware {
  return (ctx, next) => {
    if (settings.mode === 'off') return next();
    const email = ctx.state.caller?.email ?? null;
    if (ctx.method === 'POST') {
      const body = ctx.request.body as Record<string, unknown> | undefined;
      if (!body || typeof body !== 'object' || Array.isArray(body)) return next();
      const document = trustedDocumentOf(settings, body, email);
      if (document !== null) {
        const resolved = resolvedById(body, document);
        for (const key of Object.keys(body)) delete body[key];
        Object.assign(body, resolved);
      }
      return next();
    }
    const params: Record<string, unknown> = Object.fromEntries(new URLSearchParams(ctx.querystring));
    params.extensions = parsedJson(params.extensions as string | undefined);
    const document = trustedDocumentOf(settings, params, email);
    if (document !== null) {
      const resolved = resolvedById(params, document);
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(resolved)) {
        if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
      }
      ctx.url = `${ctx.path}?${search}`;
    }
    return next();
  };
}
