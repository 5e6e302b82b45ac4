import { Migration } from '@mikro-orm/migrations';

/**
 * Derived data that cannot go stale (docs/statistics.md, "Derived data"):
 *
 * - `derived_data_rebuild()` restores everything the database derives, from its sources, set-based: each version's
 *   template (`document_version.template_id`), then the statistics tables and the offers' versions
 *   (`statistics_rebuild_rows` and the offer pass of Migration20261231000000_statistics_offer_version).
 *   `statistics_rebuild()`, the name the README gave, now runs it whole; the TRUNCATE triggers call it too.
 * - A version's template is required: a check refuses a version without one, so a writer that bypasses the trigger
 *   fails loudly instead of leaving a version no dashboard shows.
 * - The triggers that derive data fire always (`ENABLE ALWAYS`), also under `session_replication_role = replica`
 *   (bulk loads, pg_restore --disable-triggers aside): the statistics' are statement-level and set-based, so a bulk
 *   statement costs one recomputation of what it touched (`npm run bench bulk`). PostgreSQL's logical replication
 *   apply fires row triggers (the version's template) but no statement triggers: a subscriber runs the rebuild
 *   (docs/statistics.md).
 */
const STATISTICS_TABLES = ['document_version', 'document', 'template', 'project'];

export class Migration20270205000000_derived_data extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function derived_data_rebuild() returns void language plpgsql as $$
begin
  update document_version v set template_id = d.template_id from document d
    where d.id = v.document_id and v.template_id is distinct from d.template_id;
  perform statistics_rebuild_rows();
  update document_statistics ds set offer_version = a.version, offer_sent_at = a.sent_at
    from (select distinct on (v.document_id) v.document_id, v.version, v.sent_at from document_version v
          where v.status = 'ANSWERED' order by v.document_id, v.version desc) a
    where a.document_id = ds.document_id;
end $$;`);
    this.addSql(`create or replace function statistics_rebuild() returns void language plpgsql as $$
begin
  perform derived_data_rebuild();
end $$;`);
    // Versions loaded with the triggers off since Migration20270120000000_version_template get their template first.
    this.addSql(`update document_version v set template_id = d.template_id from document d
  where d.id = v.document_id and v.template_id is distinct from d.template_id;`);
    this.addSql(`alter table "document_version" add constraint "document_version_template_id_check" check (template_id is not null);`);
    this.addSql(`alter table "document_version" enable always trigger "version_template_of_document_insert", enable always trigger "version_template_of_document_update";`);
    this.addSql(`alter table "document" enable always trigger "version_template_follow_document";`);
    for (const table of STATISTICS_TABLES) {
      this.addSql(`alter table "${table}" ${['insert', 'update', 'delete', 'truncate'].map((e) => `enable always trigger "${table}_statistics_${e}"`).join(', ')};`);
    }
  }

  override async down(): Promise<void> {
    for (const table of STATISTICS_TABLES) {
      this.addSql(`alter table "${table}" ${['insert', 'update', 'delete', 'truncate'].map((e) => `enable trigger "${table}_statistics_${e}"`).join(', ')};`);
    }
    this.addSql(`alter table "document" enable trigger "version_template_follow_document";`);
    this.addSql(`alter table "document_version" enable trigger "version_template_of_document_insert", enable trigger "version_template_of_document_update";`);
    this.addSql(`alter table "document_version" drop constraint if exists "document_version_template_id_check";`);
    this.addSql(`create or replace function statistics_rebuild() returns void language plpgsql as $$
begin
  perform statistics_rebuild_rows();
  update document_statistics ds set offer_version = a.version, offer_sent_at = a.sent_at
    from (select distinct on (v.document_id) v.document_id, v.version, v.sent_at from document_version v
          where v.status = 'ANSWERED' order by v.document_id, v.version desc) a
    where a.document_id = ds.document_id;
end $$;`);
    this.addSql(`drop function if exists derived_data_rebuild();`);
  }
}
