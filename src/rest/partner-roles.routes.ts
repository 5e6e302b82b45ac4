import type { RouteDef } from './route';

/** Operations #26-#28. */
export const partnerRoleRoutes: RouteDef[] = [];
