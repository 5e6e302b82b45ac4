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
}

export function createContext(sc: ServiceContext): GraphQLContext {
  const selection = new OperationSelection();
  return { sc, loaders: createLoaders(sc, selection), selection };
}
