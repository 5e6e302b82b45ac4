import type { RouteDef } from './route';

/** Operations #35. */
export const creditsRoutes: RouteDef[] = [];
