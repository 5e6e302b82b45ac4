import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { uuidArguments } from '../../platform/graphql/uuid-args';
import { CreateWebhookInput, UpdateWebhookInput } from './webhook.input';
import { Webhook, WebhookAttempt, WebhookEvent, WebhookSecret } from './webhook.output';
import { ATTEMPTS_PAGE, WebhookService } from './webhook.service';
import { Paged } from '../../platform/graphql/cost';

/** The REST webhook operations (webhooks.routes.ts), in GraphQL: one service, the same rules and errors. */
@UseMiddleware(uuidArguments)
@Resolver(() => Webhook)
export class WebhookResolver {
  @Query(() => [Webhook], { description: 'The webhook endpoints of the organizations where the caller is Administrator, oldest first' })
  webhooks(@Ctx() { sc }: GraphQLContext) {
    return new WebhookService(sc).list();
  }

  @Query(() => Webhook, { description: 'One endpoint, without its secret' })
  webhook(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new WebhookService(sc).get(id);
  }

  @Query(() => [WebhookAttempt], { description: `The endpoint's latest delivery attempts, newest first (at most ${ATTEMPTS_PAGE.max})` })
  @Paged(ATTEMPTS_PAGE)
  webhookAttempts(
    @Arg('webhookId', () => ID) webhookId: string,
    @Arg('first', () => Int, { defaultValue: ATTEMPTS_PAGE.default }) first: number,
    @Ctx() { sc }: GraphQLContext,
  ) {
    return new WebhookService(sc).attempts(webhookId, first);
  }

  @Mutation(() => WebhookSecret, { description: 'Creates an endpoint; the answer holds its signing secret, shown this once' })
  createWebhook(@Arg('input', () => CreateWebhookInput) input: CreateWebhookInput, @Ctx() { sc }: GraphQLContext) {
    return new WebhookService(sc).create(input);
  }

  @Mutation(() => Webhook, { description: 'Changes an endpoint; a field left out is unchanged' })
  updateWebhook(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateWebhookInput) input: UpdateWebhookInput, @Ctx() { sc }: GraphQLContext) {
    return new WebhookService(sc).update(id, input);
  }

  @Mutation(() => ID, { description: 'Deletes an endpoint; answers its id' })
  async deleteWebhook(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    await new WebhookService(sc).remove(id);
    return id;
  }

  @Mutation(() => WebhookSecret, { description: 'A new secret, shown this once; the previous one also signs for WEBHOOK_SECRET_OVERLAP' })
  rotateWebhookSecret(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new WebhookService(sc).rotate(id);
  }

  @Mutation(() => WebhookEvent, { description: 'Queues a webhook.test event for this endpoint' })
  sendTestWebhook(@Arg('id', () => ID) id: string, @Ctx() { sc }: GraphQLContext) {
    return new WebhookService(sc).sendTest(id);
  }

  @Mutation(() => WebhookEvent, { description: 'Sends an attempt\'s event to the endpoint again, now, with the same webhook-id' })
  redeliverWebhookAttempt(@Arg('webhookId', () => ID) webhookId: string, @Arg('attemptId', () => ID) attemptId: string, @Ctx() { sc }: GraphQLContext) {
    return new WebhookService(sc).redeliver(webhookId, attemptId);
  }
}
