import { ArrayMaxSize } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { Bool, EachOneOf, List, Optional, Required, Text, Uuid } from '../../platform/validation/rules';
import { WEBHOOK_EVENT_TYPES } from './event-types';

const URL_DESCRIPTION = 'Where events are POSTed: https:// in production, never a private, loopback or link-local address';
const TYPES_DESCRIPTION = `The event types sent to it, among: ${WEBHOOK_EVENT_TYPES.join(', ')}`;

/** Body of POST /webhooks, and GraphQL's createWebhook. */
@InputType('CreateWebhookInput')
export class CreateWebhookInput {
  @Field(() => ID, { description: 'An organization where the caller is Administrator' })
  @Required() @Uuid()
  organizationId!: string;

  @Field(() => String, { description: URL_DESCRIPTION })
  @Required() @Text(2000)
  url!: string;

  @Field(() => [String], { description: TYPES_DESCRIPTION })
  @Required() @List(1) @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: `must have at most ${WEBHOOK_EVENT_TYPES.length} items` }) @EachOneOf(WEBHOOK_EVENT_TYPES)
  eventTypes!: string[];

  @Field(() => String, { nullable: true })
  @Optional() @Text(500)
  description?: string | null;
}

/** Body of PUT /webhooks/{webhook_id}, and GraphQL's updateWebhook: a field left out is unchanged. */
@InputType('UpdateWebhookInput')
export class UpdateWebhookInput {
  @Field(() => String, { nullable: true, description: URL_DESCRIPTION })
  @Optional() @Text(2000)
  url?: string | null;

  @Field(() => [String], { nullable: true, description: TYPES_DESCRIPTION })
  @Optional() @List(1) @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: `must have at most ${WEBHOOK_EVENT_TYPES.length} items` }) @EachOneOf(WEBHOOK_EVENT_TYPES)
  eventTypes?: string[] | null;

  @Field(() => String, { nullable: true, description: 'Empty text clears it' })
  @Optional() @Text(500)
  description?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'true enables a disabled endpoint again (its pending deliveries resume); false disables it' })
  @Optional() @Bool()
  enabled?: boolean | null;
}

/** Path of one endpoint. */
export class WebhookParams {
  @Required() @Uuid()
  webhookId!: string;
}

/** Path of one attempt of an endpoint. */
export class WebhookAttemptParams extends WebhookParams {
  @Required() @Uuid()
  attemptId!: string;
}
