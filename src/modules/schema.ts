import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema, type PubSub } from 'type-graphql';
import { validateInstance } from '../platform/validation/validation';
import { directFieldResolvers } from '../platform/graphql/direct-resolvers';
import { freshLoadsAfterMutations } from '../platform/graphql/dataloaders';
import { LEVELING_RESOLVERS } from './leveling/leveling.resolver';
import { DirectoryResolver } from './invitations/directory.resolver';
import { ProjectChangeResolver, SubscriptionResolver, TemplateChangeResolver } from './changes/subscription.resolver';
import { OrganizationResolver, UserResolver } from './organizations/organization.resolver';
import { ProjectFieldsResolver, ProjectResolver } from './projects/project.resolver';
import { StatisticsResolver } from './statistics/statistics.resolver';
import { ProjectTradeResolver, ProjectTradesFieldResolver } from './trades/project-trade.resolver';
import { DocumentResolver, ProjectTemplatesFieldResolver, TemplateFieldsResolver, TemplateResolver } from './templates/template.resolver';
import { INVITATION_RESOLVERS } from './invitations/invitation.resolver';
import { TEMPLATE_PAYLOAD_RESOLVERS } from './templates/template.payloads';
import { PROJECT_TRADE_PAYLOAD_RESOLVERS } from './trades/project-trade.payloads';
import { SwitchOrganizationPayloadResolver } from './organizations/organization.payloads';
import { WebhookResolver } from './webhooks/webhook.resolver';
import { DateTimeScalar } from '../platform/graphql/scalars';

let built: Promise<GraphQLSchema> | null = null;

/**
 * Every subscription gives its own `subscribe` (events come from the database through the feed,
 * src/modules/changes/feed.ts); type-graphql still wants a PubSub for topic-based ones, of which there are none.
 */
const NO_TOPICS: PubSub = {
  publish: () => {
    throw new Error('subscriptions are fed by the database (ChangeFeed), not published to topics');
  },
  subscribe: () => {
    throw new Error('subscriptions are fed by the database (ChangeFeed), not by topics');
  },
};

/**
 * The schema, built once per process from the resolvers and types. Output types are `simpleResolvers`: their
 * plain fields are read off the record by graphql-js's default resolver, as no middleware applies to them
 * (type-graphql's own wrapper would run for every scalar of every answer); relations are field resolvers.
 */
export function graphqlSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers: [UserResolver, OrganizationResolver, ProjectResolver, StatisticsResolver, ProjectFieldsResolver, ProjectTradesFieldResolver, ProjectTradeResolver,
      ProjectTemplatesFieldResolver, TemplateResolver, ...INVITATION_RESOLVERS, TemplateFieldsResolver, DocumentResolver, DirectoryResolver,
      ...PROJECT_TRADE_PAYLOAD_RESOLVERS, ...TEMPLATE_PAYLOAD_RESOLVERS, SwitchOrganizationPayloadResolver,
      SubscriptionResolver, ProjectChangeResolver, TemplateChangeResolver, ...LEVELING_RESOLVERS, WebhookResolver],
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    pubSub: NO_TOPICS,
    // Inputs are validated by the same rules as REST (the modules' *.input.ts), with the same error bodies.
    validateFn: async (argValue) => {
      if (argValue && typeof argValue === 'object' && !Array.isArray(argValue)) await validateInstance(argValue);
      if (Array.isArray(argValue)) for (const item of argValue) if (item && typeof item === 'object') await validateInstance(item);
    },
  }).then(directFieldResolvers).then(freshLoadsAfterMutations);
  return built;
}
