import type { ServiceContext } from '../services/service-context';
import { createLoaders, type Loaders } from './loaders';

/** What every resolver gets: the request's service context and its own DataLoaders. */
export interface GraphQLContext {
  sc: ServiceContext;
  loaders: Loaders;
}

export function createContext(sc: ServiceContext): GraphQLContext {
  return { sc, loaders: createLoaders(sc) };
}
