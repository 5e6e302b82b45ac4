import type { RouteDef } from './route';

/** Operations #29-#31. */
export const tradeMappingRoutes: RouteDef[] = [];
