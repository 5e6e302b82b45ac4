import { Migration } from '@mikro-orm/migrations';

/**
 * Answers of writes sent with an `Idempotency-Key` (src/platform/http/idempotency.ts, README "Retrying writes"):
 * one row per caller and key, written in the transaction of the write itself, so that a committed write always
 * has its answer and a rolled-back one never does. `request_hash` tells a retry from another request under the
 * same key; rows past `expires_at` count as absent and are deleted by the instances as they go.
 */
export class Migration20270201000000_idempotency_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "idempotency_key" (
      "user_id" uuid not null,
      "key" varchar(255) not null,
      "request_hash" char(64) not null,
      "method" varchar(8) not null,
      "path" text not null,
      "status" smallint not null,
      "content_type" text null,
      "body" text not null,
      "created_at" timestamptz not null default now(),
      "expires_at" timestamptz not null,
      constraint "idempotency_key_pkey" primary key ("user_id", "key"));`);
    this.addSql(`create index "idempotency_key_expires_at_index" on "idempotency_key" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_key";`);
  }
}
