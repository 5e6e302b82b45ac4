import { Migration } from '@mikro-orm/migrations';

/**
 * Each version keeps its document's template (`document_version.template_id`), with an index that holds a
 * template's versions together, in document and version order, with the columns a dashboard shows: the
 * versions of a page of projects are then one index probe per template, read from the index alone, instead of
 * one probe and one heap page per document (the dashboard's versions statement: about 20 ms in PostgreSQL on the
 * bench data set, 5 ms this way; docs/benchmarks.md).
 *
 * The column is derived, never written by the service: a row trigger sets it from the document on every insert
 * and on any update of `document_id` or `template_id`, whoever writes the version (the service, or the answers
 * written straight in SQL); a document that changes template takes its versions along. The version's trigger
 * reads the document `for key share`, the lock its foreign key check takes anyway: a concurrent change of the
 * document's template waits for the version's transaction (and then moves the new version too), or the version
 * waits for it and reads the new template. An unknown document is refused by the trigger as by the foreign key
 * on `document_id`, so the column, nullable for the entity's sake (the service never gives it), is never null.
 * No foreign key of its own: the document's already removes the versions with their template.
 *
 * Bounds (docs/decisions.md, "Versions kept under their template"): a document moved inside a REPEATABLE READ or
 * SERIALIZABLE transaction does not take along a version committed after that transaction's snapshot (its update
 * cannot see it); the service moves no document and writes under READ COMMITTED. A composite foreign key to
 * `document (id, template_id)` with ON UPDATE CASCADE would close that case, but the ORM cannot map a key to a
 * column pair that is not a primary key. The document is read when the row is, not at the end of the statement as
 * the foreign key check did: a statement inserting a document and its version in two parts of one WITH must read
 * the document's part in the version's. The functions run with the writer's rights: reading the document `for key
 * share` needs UPDATE on `document`, as the foreign key check did not.
 */
export class Migration20270120000000_version_template extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "document_version" add column "template_id" uuid null;`);
    // The backfill changes no version as the platform sees it: the change events (one notification per document of
    // the platform to live dashboards) and the statistics' comparison of every row before and after stay off for it.
    this.addSql(`alter table "document_version" disable trigger "change_event_document_version_update", disable trigger "document_version_statistics_update";`);
    this.addSql(`update "document_version" v set "template_id" = d."template_id" from "document" d where d."id" = v."document_id";`);
    this.addSql(`alter table "document_version" enable trigger "change_event_document_version_update", enable trigger "document_version_statistics_update";`);
    this.addSql(`create function "version_template_of_document"() returns trigger language plpgsql as $$
begin
  select d.template_id into new.template_id from document d where d.id = new.document_id for key share;
  -- An unknown document: the refusal the foreign key on document_id would give, not a null template.
  if not found then
    raise foreign_key_violation using
      message = 'insert or update on table "document_version" violates foreign key constraint "document_version_document_id_foreign"',
      detail = format('Key (document_id)=(%s) is not present in table "document".', new.document_id),
      constraint = 'document_version_document_id_foreign', table = 'document_version';
  end if;
  return new;
end $$;`);
    this.addSql(`create trigger "version_template_of_document_insert" before insert on "document_version"
  for each row execute function "version_template_of_document"();`);
    // Only when one of the two really changes: a writer setting every column (document_id to itself) neither reads
    // nor locks the document, as the foreign key check skips an unchanged key.
    this.addSql(`create trigger "version_template_of_document_update" before update of "document_id", "template_id" on "document_version"
  for each row when (old.document_id is distinct from new.document_id or old.template_id is distinct from new.template_id)
  execute function "version_template_of_document"();`);
    this.addSql(`create function "version_template_follow_document"() returns trigger language plpgsql as $$
begin
  update document_version set template_id = new.template_id where document_id = new.id;
  return null;
end $$;`);
    this.addSql(`create trigger "version_template_follow_document" after update of "template_id" on "document"
  for each row when (old.template_id is distinct from new.template_id) execute function "version_template_follow_document"();`);
    this.addSql(`create index "document_version_template_id_index" on "document_version" ("template_id", "document_id", "version")
  include ("status", "sub_total", "discount");`);
    this.addSql(`analyze "document_version";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "version_template_follow_document" on "document";`);
    this.addSql(`drop function if exists "version_template_follow_document"();`);
    this.addSql(`drop trigger if exists "version_template_of_document_update" on "document_version";`);
    this.addSql(`drop trigger if exists "version_template_of_document_insert" on "document_version";`);
    this.addSql(`drop function if exists "version_template_of_document"();`);
    this.addSql(`drop index if exists "document_version_template_id_index";`);
    this.addSql(`alter table "document_version" drop column if exists "template_id";`);
  }
}
