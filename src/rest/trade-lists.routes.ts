import type { RouteDef } from './route';

/** Operations #23-#24. */
export const tradeListRoutes: RouteDef[] = [];
