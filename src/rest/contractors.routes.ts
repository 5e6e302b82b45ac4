import type { RouteDef } from './route';

/** Operations #22. */
export const contractorRoutes: RouteDef[] = [];
