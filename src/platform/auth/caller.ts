/** The authenticated caller, built once per request by the auth service. */
export interface Caller {
  userId: string;
  email: string;
  /** Organizations where the caller is Administrator: the only ones whose data they may see. */
  adminOrganizationIds: string[];
  /** The caller's current organization (an Administrator one), used when an input omits organization_id. */
  currentOrganizationId: string;
  /** Headquarters the caller administers. */
  adminHeadquarterIds: string[];
}
