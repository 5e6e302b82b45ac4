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
 */
export class Migration20270120000000_version_template extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "document_version" add column "template_id" uuid null;`);
    this.addSql(`update "document_version" v set "template_id" = d."template_id" from "document" d where d."id" = v."document_id";`);
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
    this.addSql(`create trigger "version_template_of_document" before insert or update of "document_id", "template_id" on "document_version"
  for each row execute function "version_template_of_document"();`);
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
    this.addSql(`drop trigger if exists "version_template_of_document" on "document_version";`);
    this.addSql(`drop function if exists "version_template_of_document"();`);
    this.addSql(`drop index if exists "document_version_template_id_index";`);
    this.addSql(`alter table "document_version" drop column if exists "template_id";`);
  }
}
