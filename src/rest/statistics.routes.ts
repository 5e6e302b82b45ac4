import type { RouteDef } from './route';

/** Operations #5. */
export const statisticsRoutes: RouteDef[] = [];
