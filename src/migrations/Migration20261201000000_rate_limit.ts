import { Migration } from '@mikro-orm/migrations';

/**
 * The counters of rate-limiter-flexible's PostgreSQL store (src/platform/http/rate-limiters.ts), with the columns that
 * library reads and writes; it runs with `tableCreated: true` and never creates tables itself. Unlogged:
 * counters need no crash safety or replication, and skipping the WAL makes each request's upsert cheaper
 * (a crash empties the table, which only resets the counts).
 */
export class Migration20261201000000_rate_limit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create unlogged table "rate_limit" ("key" varchar(255) not null, "points" integer not null default 0, "expire" bigint null, constraint "rate_limit_pkey" primary key ("key"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "rate_limit";`);
  }
}
