import type { ExecutionResult, OperationTypeNode } from 'graphql';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestReads, ReadRoute } from '../http/state';
import { replicaFault } from '../database/replicas';
import type { ServiceContext } from '../service-context';
import type { OperationSelection } from './selection';

/** What the loaders of a request are to the platform: each can forget what it loaded (after a mutation). */
type RequestLoaders = Record<string, { clearAll(): void }>;

/** Makes a request's loaders (src/modules/loaders.ts). */
export type LoadersFactory<L extends RequestLoaders = RequestLoaders> = (sc: ServiceContext, selection: OperationSelection) => L;

/**
 * What every resolver gets: the request's service context, its own DataLoaders (the modules' ones:
 * src/modules/context.ts names them), and the fields its operation selects (read once the operation is known:
 * selection.ts).
 */
export interface GraphQLContext<L extends RequestLoaders = RequestLoaders> {
  sc: ServiceContext;
  loaders: L;
  selection: OperationSelection;
  /** Where the operation reads, once its kind is known (src/platform/graphql/executor.ts); absent without replicas. */
  routing?: OperationRouting;
}

/** What the executor asks of the context around one operation (given the context it executes with). */
export interface OperationRouting {
  /** Before it runs: a query is read-only work, which a replica may serve. */
  begin(kind: OperationTypeNode, context: GraphQLContext): void;
  /** After it ran: the context to run it again with, on the primary, when its replica failed under it; else null. */
  retry(result: ExecutionResult, context: GraphQLContext): GraphQLContext | null;
}

/**
 * A query reads through the request's read route (src/platform/http/read-routing.ts); its resolvers and loaders take
 * `sc.em` when they run, so setting it before execution moves all of them. When the replica fails under it, the
 * operation runs again on the primary, with loaders of its own: the first run's may keep the failure (a
 * read-ahead loader caches an error per key).
 */
export function operationRouting(reads: RequestReads, primary: EntityManager, createLoaders: LoadersFactory): OperationRouting {
  let route: ReadRoute | null = null;
  return {
    begin(kind, context) {
      if (kind !== 'query') return;
      route = reads.route();
      context.sc.em = route.em;
    },
    retry(result, context) {
      const fault = route?.replica ? result.errors?.find((e) => replicaFault(e.originalError)) : undefined;
      if (!route || !fault) return null;
      reads.failed(route, fault.originalError);
      route = null;
      const sc = { ...context.sc, em: primary };
      return { ...context, sc, loaders: createLoaders(sc, context.selection) };
    },
  };
}
