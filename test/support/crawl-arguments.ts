import { DEMO_IDS } from '../../src/seed/demo-data';

const UNKNOWN_WEBHOOK = '5e1d0c9b-8a7f-4e6d-9c5b-4a3f2e1d0c9b';

/**
 * Arguments of the Query fields for a crawl as architect@demo.test: every demo record of each kind, the
 * caller's and others' (those answer NOT_FOUND or null, which a cache must survive too).
 */
export function demoRootArguments(): Record<string, Array<Record<string, unknown>>> {
  const projects = Object.values(DEMO_IDS.projects);
  return {
    project: projects.map((id) => ({ id })),
    projects: [{}, { archived: true }, { first: 2 }],
    projectsStatistics: [{ ids: projects }],
    organization: Object.values(DEMO_IDS.organizations).slice(0, 3).map((id) => ({ id })),
    tradeList: Object.values(DEMO_IDS.tradeLists).map((id) => ({ id })),
    contractor: Object.values(DEMO_IDS.contractors).map((id) => ({ id })),
    creditsUsage: [{}, { headquarterId: DEMO_IDS.headquarter }],
    // The demo data holds no webhook endpoint: an unknown one answers NOT_FOUND.
    webhook: [{ id: UNKNOWN_WEBHOOK }],
    webhookAttempts: [{ webhookId: UNKNOWN_WEBHOOK }],
  };
}
