import { CreditsService } from './credits.service';
import { CreditsUsageQuery } from './credits.input';
import { CreditsUsage } from './directory.output';
import { keyed, route, type RouteDef } from '../../platform/rest/route';
import { toRest } from '../../platform/rest/serialize';

/** Operations #35. */
export const creditsRoutes: RouteDef[] = [
  route({
    operation: 35, operationId: 'creditsUsage', method: 'get', prefix: 'credits', path: '/credits-usage', tag: 'Credits',
    summary: 'Credits consumed over a period (UTC days, both inclusive) by the current organization, another organization (organization_id) or a headquarter (headquarter_id). 403 for an organization or headquarter the caller may not report on.',
    query: CreditsUsageQuery,
    success: {
      status: 200, description: '`{ credits_usage }`',
      schema: keyed('credits_usage', CreditsUsage),
    },
    async handler({ query, ...sc }) {
      return { body: { credits_usage: toRest(await new CreditsService(sc).usage(query)) } };
    },
  }),
];
