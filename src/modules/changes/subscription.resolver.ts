import { Arg, Ctx, FieldResolver, ID, Resolver, Root, Subscription } from 'type-graphql';
import { SubscriptionService } from './subscription.service';
import type { GraphQLContext } from '../context';
import { templateOf } from '../templates/template.payloads';
import type { ProjectChangeRoot, TemplateChangeRoot } from './feed';
import type { SubscriptionContext } from './websocket';
import { ProjectChange, TemplateChange } from './change.type';
import { Project } from '../projects/project.output';
import { Template } from '../templates/template.output';

/**
 * Subscriptions, over WebSocket only (graphql-ws, src/modules/changes/websocket.ts). Starting one checks
 * what the caller may watch (SubscriptionService) and registers it with the instance's feed; each update then
 * resolves in the context of its delivery (src/modules/changes/feed.ts), through the same loaders and
 * services as queries.
 */
@Resolver()
export class SubscriptionResolver {
  @Subscription(() => ProjectChange, {
    description: 'Changes of projects of the caller\'s organizations, by anyone (this service, the contractor portal): at most one update per project per coalescing window, with the project as it is now',
    subscribe: async ({ args, context }) => {
      const { feed, connection, serviceContext } = context as SubscriptionContext;
      return feed.subscribe(connection, 'projectChanged', await new SubscriptionService(serviceContext()).watchProjects(args.projectIds as string[] | null));
    },
  })
  projectChanged(
    @Root() change: ProjectChangeRoot,
    @Arg('projectIds', () => [ID], { nullable: true, description: 'The projects to watch (at most 100); every project of the caller\'s organizations, new ones included, when left out' }) _projectIds?: string[] | null,
  ): ProjectChangeRoot {
    return change;
  }

  @Subscription(() => TemplateChange, {
    description: 'Changes of a template and its slices (documents, answers): at most one update per coalescing window, with the template as it is now',
    subscribe: async ({ args, context }) => {
      const { feed, connection, serviceContext } = context as SubscriptionContext;
      return feed.subscribe(connection, 'templateChanged', await new SubscriptionService(serviceContext()).watchTemplate(args.templateId as string));
    },
  })
  templateChanged(@Root() change: TemplateChangeRoot, @Arg('templateId', () => ID) _templateId: string): TemplateChangeRoot {
    return change;
  }
}

@Resolver(() => ProjectChange)
export class ProjectChangeResolver {
  @FieldResolver(() => Project)
  project(@Root() change: ProjectChangeRoot, @Ctx() { loaders }: GraphQLContext) {
    return loaders.project.load(change.projectId);
  }
}

@Resolver(() => TemplateChange)
export class TemplateChangeResolver {
  @FieldResolver(() => Template, { nullable: true })
  template(@Root() change: TemplateChangeRoot, @Ctx() { loaders }: GraphQLContext) {
    return templateOf(loaders, change.projectId, change.templateId);
  }
}
