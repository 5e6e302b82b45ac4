import type { ExecutionResult, OperationTypeNode } from 'graphql';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestReads, ReadRoute } from '../http/state';
import { replicaFault } from '../replicas';
import type { ServiceContext } from '../services/service-context';
import { createLoaders, type Loaders } from './loaders';
import { OperationSelection } from './selection';

/**
 * What every resolver gets: the request's service context, its own DataLoaders, and the fields its operation
 * selects (read once the operation is known: selection.ts).
 */
export interface GraphQLContext {
  sc: ServiceContext;
  loaders: Loaders;
  selection: OperationSelection;
  /** Where the operation reads, once its kind is known (src/graphql/executor.ts); absent without replicas. */
  routing?: OperationRouting;
}

export function createContext(sc: ServiceContext): GraphQLContext {
  const selection = new OperationSelection();
  return { sc, loaders: createLoaders(sc, selection), selection };
}

/** What the executor asks of the context around one operation. */
export interface OperationRouting {
  /** Before it runs: a query is read-only work, which a replica may serve. */
  begin(kind: OperationTypeNode): void;
  /** After it ran: whether to run it again, on the primary, because its replica failed under it. */
  retry(result: ExecutionResult): boolean;
}

/**
 * A query reads through the request's read route (src/http/read-routing.ts); its resolvers and loaders take
 * `sc.em` when they run, so setting it before execution moves all of them. When the replica fails under it, the
 * operation runs again on the primary with fresh loaders (their caches may hold the failure).
 */
export function operationRouting(context: GraphQLContext, reads: RequestReads): OperationRouting {
  const primary: EntityManager = context.sc.em;
  let route: ReadRoute | null = null;
  return {
    begin(kind) {
      if (kind !== 'query') return;
      route = reads.route();
      context.sc.em = route.em;
    },
    retry(result) {
      if (!route?.replica || !result.errors?.some((e) => replicaFault(e.originalError))) return false;
      reads.failed(route, result.errors.find((e) => replicaFault(e.originalError))!.originalError);
      route = null;
      context.sc.em = primary;
      context.loaders = createLoaders(context.sc, context.selection);
      return true;
    },
  };
}
