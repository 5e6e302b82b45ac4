import { OperationSelection } from '../platform/graphql/selection';
import type { GraphQLContext as PlatformContext } from '../platform/graphql/context';
import type { ServiceContext } from '../platform/service-context';
import { createLoaders, type Loaders } from './loaders';

/** What every resolver of the modules gets: the platform's context with the modules' loaders. */
export type GraphQLContext = PlatformContext<Loaders>;

/** A request's context: its service context, its loaders, the selection its operation will make. */
export function createContext(sc: ServiceContext): GraphQLContext {
  const selection = new OperationSelection();
  return { sc, loaders: createLoaders(sc, selection), selection };
}
