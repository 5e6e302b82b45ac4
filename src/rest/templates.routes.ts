import type { RouteDef } from './route';

/** Operations #10-#16. */
export const templateRoutes: RouteDef[] = [];
