import type { RouteDef } from './route';

/** Operations #33-#34. */
export const companyRoutes: RouteDef[] = [];
