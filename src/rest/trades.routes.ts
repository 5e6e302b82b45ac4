import type { RouteDef } from './route';

/** Operations #6-#9. */
export const tradeRoutes: RouteDef[] = [];
