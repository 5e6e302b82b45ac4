/**
 * The demo data's identifiers and logins (decisions.md section 3): the fixed UUIDs, legacy identifiers, logins and
 * SIRETs, which the API's examples name too (src/modules/examples.ts, re-exported here), the demo password and the
 * demo architect as a caller. What the tests name; nothing here creates a record (demo-records.ts holds the records,
 * demo-data.ts loads them).
 */
import type { Caller } from '../platform/auth/caller';
import { DEMO_IDS, DEMO_USERS } from '../modules/examples';

export * from '../modules/examples';

/** Password of the four demo users. */
export const DEMO_PASSWORD = 'demo-password';

/** The demo architect as loadCaller builds them: for calling the services directly (tests, benchmarks). */
export const DEMO_ARCHITECT_CALLER: Caller = {
  userId: DEMO_IDS.users.architect,
  email: DEMO_USERS.architect,
  adminOrganizationIds: [DEMO_IDS.organizations.atelierDemo, DEMO_IDS.organizations.atelierNord],
  currentOrganizationId: DEMO_IDS.organizations.atelierDemo,
  adminHeadquarterIds: [DEMO_IDS.headquarter],
};
