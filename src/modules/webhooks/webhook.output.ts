import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DEMO_IDS } from '../examples';
import { Rest } from '../../platform/outputs/output';
import { WEBHOOK_EVENT_TYPES } from './event-types';

const EXAMPLE_ID = '6f1c2a9e-3b7d-4c5e-9a1f-2d8e7b6c5a40';
const EXAMPLE_EVENT_ID = '0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e';

/** An organization's webhook endpoint; its secret is shown only by creation and rotation (WebhookSecret). */
@ObjectType('Webhook', { description: 'An endpoint of an organization that receives events (docs/webhooks.md)', simpleResolvers: true })
export class Webhook {
  @Field(() => ID) @Rest({ example: EXAMPLE_ID }) id!: string;
  @Field(() => ID) @Rest({ example: DEMO_IDS.organizations.atelierDemo }) organizationId!: string;
  @Field() @Rest({ example: 'https://erp.example.com/hooks/tender' }) url!: string;
  @Field() @Rest({ example: 'ERP: book retained offers' }) description!: string;
  @Field(() => [String]) @Rest({ schema: { enum: [...WEBHOOK_EVENT_TYPES] }, example: ['contractor.answered', 'template.closed'] }) eventTypes!: string[];
  @Field({ description: 'false once disabled, by its organization or by delivery (disabledReason says why)' }) @Rest({ example: true }) enabled!: boolean;
  @Field(() => Date, { nullable: true }) @Rest({ example: null }) disabledAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'Why delivery disabled it: a 410 answer, or every delivery failing for days' })
  @Rest({ example: null }) disabledReason!: string | null;
  @Field(() => Date, { nullable: true, description: 'Since when every attempt failed; null after a success' }) @Rest({ example: null }) failingSince!: Date | null;
  @Field(() => Date, { nullable: true, description: 'Until when the secret before the last rotation also signs' }) @Rest({ example: null }) previousSecretExpiresAt!: Date | null;
  @Field(() => Date) @Rest({ example: '2026-11-27T09:00:00.000000Z' }) createdAt!: Date;
  @Field(() => Date) @Rest({ example: '2026-11-27T09:00:00.000000Z' }) updatedAt!: Date;
}

@ObjectType('WebhookSecret', { description: 'An endpoint with its signing secret, shown once: at creation and at each rotation', simpleResolvers: true })
export class WebhookSecret {
  @Field(() => Webhook) webhook!: Webhook;
  @Field({ description: 'Standard Webhooks secret (`whsec_` and base64) that signs every delivery' })
  @Rest({ example: 'whsec_MfKQ9r8GKYqrTZjUPD8ILPZ8cL8H8Yb8' }) secret!: string;
}

@ObjectType('WebhookAttempt', { description: 'One attempt to deliver an event to an endpoint, newest first', simpleResolvers: true })
export class WebhookAttempt {
  @Field(() => ID) @Rest({ example: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d' }) id!: string;
  @Field(() => ID, { description: 'The event, sent as `webhook-id`: the same on every attempt' }) @Rest({ example: EXAMPLE_EVENT_ID }) eventId!: string;
  @Field() @Rest({ example: 'contractor.answered' }) eventType!: string;
  @Field(() => Int, { description: '1 for the first attempt of this delivery' }) @Rest({ schema: { minimum: 1 }, example: 1 }) attempt!: number;
  @Field(() => Date) @Rest({ example: '2026-11-27T09:00:01.250000Z' }) attemptedAt!: Date;
  @Field({ description: 'succeeded (2xx), failed (another status), gone (410: endpoint disabled), timeout, unreachable, refused (address not allowed)' })
  @Rest({ schema: { enum: ['succeeded', 'failed', 'gone', 'timeout', 'unreachable', 'refused'] }, example: 'succeeded' }) outcome!: string;
  @Field(() => Int, { nullable: true }) @Rest({ example: 200 }) responseStatus!: number | null;
  @Field(() => String, { nullable: true, description: 'The first 512 characters of the answer\'s body' }) @Rest({ example: null }) responseBody!: string | null;
  @Field(() => String, { nullable: true }) @Rest({ example: null }) error!: string | null;
  @Field(() => Int) @Rest({ schema: { minimum: 0 }, example: 42 }) durationMs!: number;
}

@ObjectType('WebhookEvent', { description: 'An event queued for delivery', simpleResolvers: true })
export class WebhookEvent {
  @Field(() => ID, { description: 'Sent as `webhook-id`' }) @Rest({ example: EXAMPLE_EVENT_ID }) id!: string;
  @Field() @Rest({ example: 'webhook.test' }) type!: string;
  @Field(() => Date) @Rest({ example: '2026-11-27T09:00:00.000000Z' }) createdAt!: Date;
}
