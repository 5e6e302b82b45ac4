import { Migration } from '@mikro-orm/migrations';

/**
 * Secrets every instance of the service must share, created once in the database they share (the first
 * instance to start inserts it; src/modules/documents/file-url.ts): the key that signs download URLs, so that a URL
 * one instance signed verifies on any other (docs/decisions.md, "Several instances").
 */
export class Migration20261210000000_service_secret extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "service_secret" ("name" varchar(64) not null, "secret" bytea not null, "created_at" timestamptz not null default now(), constraint "service_secret_pkey" primary key ("name"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "service_secret";`);
  }
}
