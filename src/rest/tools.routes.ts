import type { RouteDef } from './route';

/** Operations #25, #32. */
export const toolRoutes: RouteDef[] = [];
