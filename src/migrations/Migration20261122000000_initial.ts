import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000_initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "headquarter" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "name" varchar(255) not null, constraint "headquarter_pkey" primary key ("id"));`);
    this.addSql(`alter table "headquarter" add constraint "headquarter_legacy_id_unique" unique ("legacy_id");`);

    this.addSql(`create table "organization" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "name" varchar(255) not null, "kind" text check ("kind" in ('ARCHITECT', 'CONTRACTOR')) not null default 'ARCHITECT', "fiscal_number" varchar(14) null, "addresses" jsonb not null, "business_sectors" text[] not null, "api_enabled" boolean not null default true, "headquarter_id" uuid null, constraint "organization_pkey" primary key ("id"));`);
    this.addSql(`alter table "organization" add constraint "organization_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "organization_fiscal_number_index" on "organization" ("fiscal_number");`);
    this.addSql(`create index "organization_headquarter_id_index" on "organization" ("headquarter_id");`);

    this.addSql(`create table "credit_ledger_entry" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "amount" int not null, "kind" varchar(255) not null, "reference_id" uuid null, constraint "credit_ledger_entry_pkey" primary key ("id"));`);
    this.addSql(`create index "credit_ledger_entry_organization_id_created_at_index" on "credit_ledger_entry" ("organization_id", "created_at");`);

    this.addSql(`create table "contractor" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "organization_id" uuid not null, "company_id" uuid null, "name" varchar(255) not null, "email" varchar(255) not null, "phone" varchar(255) null, "fiscal_number" varchar(14) null, constraint "contractor_pkey" primary key ("id"));`);
    this.addSql(`alter table "contractor" add constraint "contractor_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "contractor_organization_id_index" on "contractor" ("organization_id");`);
    this.addSql(`create index "contractor_company_id_index" on "contractor" ("company_id");`);
    this.addSql(`create index "contractor_fiscal_number_index" on "contractor" ("fiscal_number");`);
    this.addSql(`alter table "contractor" add constraint "contractor_organization_id_email_unique" unique ("organization_id", "email");`);

    this.addSql(`create table "partner_role" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "code" varchar(255) not null, "name" varchar(255) not null, "is_standard" boolean not null default false, constraint "partner_role_pkey" primary key ("id"));`);
    this.addSql(`alter table "partner_role" add constraint "partner_role_code_unique" unique ("code");`);

    this.addSql(`create table "signing_key" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "kid" varchar(255) not null, "private_jwk" jsonb not null, "public_jwk" jsonb not null, "retired_at" timestamptz null, constraint "signing_key_pkey" primary key ("id"));`);
    this.addSql(`alter table "signing_key" add constraint "signing_key_kid_unique" unique ("kid");`);

    this.addSql(`create table "trade_category" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "code" varchar(255) not null, "name" varchar(255) not null, constraint "trade_category_pkey" primary key ("id"));`);
    this.addSql(`alter table "trade_category" add constraint "trade_category_code_unique" unique ("code");`);

    this.addSql(`create table "trade_category_mapping" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "source" text check ("source" in ('NAME', 'SVC', 'PARTNER')) not null, "key" varchar(255) not null, "category_id" uuid not null, constraint "trade_category_mapping_pkey" primary key ("id"));`);
    this.addSql(`create index "trade_category_mapping_category_id_index" on "trade_category_mapping" ("category_id");`);
    this.addSql(`create index "trade_category_mapping_source_key_index" on "trade_category_mapping" ("source", "key");`);
    this.addSql(`alter table "trade_category_mapping" add constraint "trade_category_mapping_source_key_category_id_unique" unique ("source", "key", "category_id");`);

    this.addSql(`create table "trade_list" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "name" varchar(255) not null, "organization_id" uuid null, constraint "trade_list_pkey" primary key ("id"));`);
    this.addSql(`alter table "trade_list" add constraint "trade_list_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "trade_list_organization_id_index" on "trade_list" ("organization_id");`);

    this.addSql(`create table "project" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "organization_id" uuid not null, "name" varchar(255) not null, "construction_type" text check ("construction_type" in ('collective_building', 'extension', 'health_building', 'mall', 'office', 'other', 'public_building', 'public_space', 'single_flat', 'warehouse')) not null, "trade_list_id" uuid not null, "response_type" text check ("response_type" in ('DPGF', 'DPGF_QUOTE', 'QUOTE')) not null, "end_of_offer_date" date null, "end_works_construction" date null, "commencement_works_construction" date null, "tenders_closing_activated" boolean not null default false, "published_on_marketplace" boolean not null default false, "scopes" jsonb null, "site_address" jsonb null, "optional_dates" jsonb null, "archived_at" timestamptz null, constraint "project_pkey" primary key ("id"));`);
    this.addSql(`alter table "project" add constraint "project_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "project_organization_id_index" on "project" ("organization_id");`);
    this.addSql(`create index "project_trade_list_id_index" on "project" ("trade_list_id");`);
    this.addSql(`create index "project_organization_id_created_at_id_index" on "project" ("organization_id", "created_at", "id");`);

    this.addSql(`create table "trade_list_trade" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "trade_list_id" uuid not null, "number" varchar(255) not null, "name" varchar(255) not null, "short_name" varchar(255) not null, constraint "trade_list_trade_pkey" primary key ("id"));`);
    this.addSql(`alter table "trade_list_trade" add constraint "trade_list_trade_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "trade_list_trade_trade_list_id_index" on "trade_list_trade" ("trade_list_id");`);
    this.addSql(`alter table "trade_list_trade" add constraint "trade_list_trade_trade_list_id_number_unique" unique ("trade_list_id", "number");`);

    this.addSql(`create table "project_trade" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "project_id" uuid not null, "number" varchar(255) not null, "name" varchar(255) not null, "short_name" varchar(255) not null, "comment" text null, "source_trade_id" uuid null, constraint "project_trade_pkey" primary key ("id"));`);
    this.addSql(`alter table "project_trade" add constraint "project_trade_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "project_trade_project_id_index" on "project_trade" ("project_id");`);
    this.addSql(`create index "project_trade_source_trade_id_index" on "project_trade" ("source_trade_id");`);

    this.addSql(`create table "template" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "project_id" uuid not null, "trade_id" uuid not null, "parent_id" uuid null, "is_slice" boolean not null default false, "slice_name" varchar(255) null, "budget" numeric(14,2) not null default 0, "closed_at" timestamptz null, "version_saved" int not null default 0, "response_type" text check ("response_type" in ('DPGF', 'DPGF_QUOTE', 'QUOTE')) null, "itemised_sheet_version" int not null default 1, "itemised_sheet_is_draft" boolean not null default true, "itemised_sheet_has_additional_services" boolean not null default false, "end_of_offer_date" timestamptz null, "consultation_started_at" timestamptz null, "fold_opened" boolean not null default false, "favourite_consultation_id" uuid null, "selected_consultation_id" uuid null, constraint "template_pkey" primary key ("id"));`);
    this.addSql(`alter table "template" add constraint "template_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "template_project_id_index" on "template" ("project_id");`);
    this.addSql(`create index "template_trade_id_index" on "template" ("trade_id");`);
    this.addSql(`create index "template_parent_id_index" on "template" ("parent_id");`);
    this.addSql(`create index "template_favourite_consultation_id_index" on "template" ("favourite_consultation_id");`);
    this.addSql(`create index "template_selected_consultation_id_index" on "template" ("selected_consultation_id");`);
    this.addSql(`create unique index "template_one_main_per_trade" on "template" ("trade_id") where "parent_id" is null;`);
    this.addSql(`create index "template_project_id_created_at_index" on "template" ("project_id", "created_at");`);

    this.addSql(`create table "document" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "template_id" uuid not null, "contractor_id" uuid not null, "intention" text check ("intention" in ('YES', 'NO', 'MAYBE')) null, "dce_downloaded_at" timestamptz null, constraint "document_pkey" primary key ("id"));`);
    this.addSql(`alter table "document" add constraint "document_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`create index "document_template_id_index" on "document" ("template_id");`);
    this.addSql(`create index "document_contractor_id_index" on "document" ("contractor_id");`);
    this.addSql(`alter table "document" add constraint "document_template_id_contractor_id_unique" unique ("template_id", "contractor_id");`);

    this.addSql(`create table "document_version" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "document_id" uuid not null, "version" int not null, "status" text check ("status" in ('DRAFT', 'ANSWERED', 'IN_REVISION', 'DECLINED')) not null, "sub_total" numeric(14,2) not null, "discount" numeric(14,2) not null default 0, "is_mandate" boolean not null default false, "has_dpgf" boolean not null default false, "sent_at" timestamptz null, constraint "document_version_pkey" primary key ("id"));`);
    this.addSql(`create index "document_version_document_id_index" on "document_version" ("document_id");`);
    this.addSql(`alter table "document_version" add constraint "document_version_document_id_version_unique" unique ("document_id", "version");`);

    this.addSql(`create table "document_file" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "version_id" uuid not null, "name" varchar(255) not null, "content_type" varchar(255) not null, "size" int not null, "content" bytea not null, constraint "document_file_pkey" primary key ("id"));`);
    this.addSql(`create index "document_file_version_id_index" on "document_file" ("version_id");`);

    this.addSql(`create table "app_user" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "legacy_id" varchar(17) not null, "email" varchar(255) not null, "first_name" varchar(255) not null, "last_name" varchar(255) not null, "phone" varchar(255) not null default '', "mobile" varchar(255) null, "password_hash" varchar(255) null, "is_registered" boolean not null default true, "api_access_granted" boolean not null default false, "api_enabled" boolean not null default false, "current_organization_id" uuid null, constraint "app_user_pkey" primary key ("id"));`);
    this.addSql(`alter table "app_user" add constraint "app_user_legacy_id_unique" unique ("legacy_id");`);
    this.addSql(`alter table "app_user" add constraint "app_user_email_unique" unique ("email");`);
    this.addSql(`create index "app_user_current_organization_id_index" on "app_user" ("current_organization_id");`);

    this.addSql(`create table "project_manager" ("project_id" uuid not null, "user_id" uuid not null, constraint "project_manager_pkey" primary key ("project_id", "user_id"));`);
    this.addSql(`create index "project_manager_user_id_index" on "project_manager" ("user_id");`);

    this.addSql(`create table "membership" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "user_id" uuid not null, "organization_id" uuid not null, "role" text check ("role" in ('ADMINISTRATOR', 'MEMBER')) not null, constraint "membership_pkey" primary key ("id"));`);
    this.addSql(`create index "membership_user_id_index" on "membership" ("user_id");`);
    this.addSql(`create index "membership_organization_id_index" on "membership" ("organization_id");`);
    this.addSql(`alter table "membership" add constraint "membership_user_id_organization_id_unique" unique ("user_id", "organization_id");`);

    this.addSql(`create table "headquarter_admin" ("headquarter_id" uuid not null, "user_id" uuid not null, constraint "headquarter_admin_pkey" primary key ("headquarter_id", "user_id"));`);
    this.addSql(`create index "headquarter_admin_user_id_index" on "headquarter_admin" ("user_id");`);

    this.addSql(`create table "auth_session" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "user_id" uuid not null, "scope" varchar(255) not null, "client_ip" varchar(255) not null, "revoked_at" timestamptz null, constraint "auth_session_pkey" primary key ("id"));`);
    this.addSql(`create index "auth_session_user_id_index" on "auth_session" ("user_id");`);

    this.addSql(`create table "refresh_token" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "session_id" uuid not null, "token_hash" varchar(255) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "refresh_token_pkey" primary key ("id"));`);
    this.addSql(`create index "refresh_token_session_id_index" on "refresh_token" ("session_id");`);
    this.addSql(`alter table "refresh_token" add constraint "refresh_token_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "user_partner_role" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "user_id" uuid not null, "role_id" uuid not null, constraint "user_partner_role_pkey" primary key ("id"));`);
    this.addSql(`create index "user_partner_role_user_id_index" on "user_partner_role" ("user_id");`);
    this.addSql(`create index "user_partner_role_role_id_index" on "user_partner_role" ("role_id");`);
    this.addSql(`alter table "user_partner_role" add constraint "user_partner_role_user_id_role_id_unique" unique ("user_id", "role_id");`);

    this.addSql(`alter table "organization" add constraint "organization_headquarter_id_foreign" foreign key ("headquarter_id") references "headquarter" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "credit_ledger_entry" add constraint "credit_ledger_entry_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "contractor" add constraint "contractor_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "contractor" add constraint "contractor_company_id_foreign" foreign key ("company_id") references "organization" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "trade_category_mapping" add constraint "trade_category_mapping_category_id_foreign" foreign key ("category_id") references "trade_category" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "trade_list" add constraint "trade_list_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "project" add constraint "project_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade;`);
    this.addSql(`alter table "project" add constraint "project_trade_list_id_foreign" foreign key ("trade_list_id") references "trade_list" ("id") on update cascade;`);

    this.addSql(`alter table "trade_list_trade" add constraint "trade_list_trade_trade_list_id_foreign" foreign key ("trade_list_id") references "trade_list" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "project_trade" add constraint "project_trade_project_id_foreign" foreign key ("project_id") references "project" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "project_trade" add constraint "project_trade_source_trade_id_foreign" foreign key ("source_trade_id") references "trade_list_trade" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "template" add constraint "template_project_id_foreign" foreign key ("project_id") references "project" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "template" add constraint "template_trade_id_foreign" foreign key ("trade_id") references "project_trade" ("id") on update cascade;`);
    this.addSql(`alter table "template" add constraint "template_parent_id_foreign" foreign key ("parent_id") references "template" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "template" add constraint "template_favourite_consultation_id_foreign" foreign key ("favourite_consultation_id") references "document" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "template" add constraint "template_selected_consultation_id_foreign" foreign key ("selected_consultation_id") references "document" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "document" add constraint "document_template_id_foreign" foreign key ("template_id") references "template" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "document" add constraint "document_contractor_id_foreign" foreign key ("contractor_id") references "contractor" ("id") on update cascade;`);

    this.addSql(`alter table "document_version" add constraint "document_version_document_id_foreign" foreign key ("document_id") references "document" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "document_file" add constraint "document_file_version_id_foreign" foreign key ("version_id") references "document_version" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "app_user" add constraint "app_user_current_organization_id_foreign" foreign key ("current_organization_id") references "organization" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "project_manager" add constraint "project_manager_project_id_foreign" foreign key ("project_id") references "project" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "project_manager" add constraint "project_manager_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "membership" add constraint "membership_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "membership" add constraint "membership_organization_id_foreign" foreign key ("organization_id") references "organization" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "headquarter_admin" add constraint "headquarter_admin_headquarter_id_foreign" foreign key ("headquarter_id") references "headquarter" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "headquarter_admin" add constraint "headquarter_admin_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "auth_session" add constraint "auth_session_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "refresh_token" add constraint "refresh_token_session_id_foreign" foreign key ("session_id") references "auth_session" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "user_partner_role" add constraint "user_partner_role_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "user_partner_role" add constraint "user_partner_role_role_id_foreign" foreign key ("role_id") references "partner_role" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "organization" drop constraint "organization_headquarter_id_foreign";`);

    this.addSql(`alter table "headquarter_admin" drop constraint "headquarter_admin_headquarter_id_foreign";`);

    this.addSql(`alter table "credit_ledger_entry" drop constraint "credit_ledger_entry_organization_id_foreign";`);

    this.addSql(`alter table "contractor" drop constraint "contractor_organization_id_foreign";`);

    this.addSql(`alter table "contractor" drop constraint "contractor_company_id_foreign";`);

    this.addSql(`alter table "trade_list" drop constraint "trade_list_organization_id_foreign";`);

    this.addSql(`alter table "project" drop constraint "project_organization_id_foreign";`);

    this.addSql(`alter table "app_user" drop constraint "app_user_current_organization_id_foreign";`);

    this.addSql(`alter table "membership" drop constraint "membership_organization_id_foreign";`);

    this.addSql(`alter table "document" drop constraint "document_contractor_id_foreign";`);

    this.addSql(`alter table "user_partner_role" drop constraint "user_partner_role_role_id_foreign";`);

    this.addSql(`alter table "trade_category_mapping" drop constraint "trade_category_mapping_category_id_foreign";`);

    this.addSql(`alter table "project" drop constraint "project_trade_list_id_foreign";`);

    this.addSql(`alter table "trade_list_trade" drop constraint "trade_list_trade_trade_list_id_foreign";`);

    this.addSql(`alter table "project_trade" drop constraint "project_trade_project_id_foreign";`);

    this.addSql(`alter table "template" drop constraint "template_project_id_foreign";`);

    this.addSql(`alter table "project_manager" drop constraint "project_manager_project_id_foreign";`);

    this.addSql(`alter table "project_trade" drop constraint "project_trade_source_trade_id_foreign";`);

    this.addSql(`alter table "template" drop constraint "template_trade_id_foreign";`);

    this.addSql(`alter table "template" drop constraint "template_parent_id_foreign";`);

    this.addSql(`alter table "document" drop constraint "document_template_id_foreign";`);

    this.addSql(`alter table "template" drop constraint "template_favourite_consultation_id_foreign";`);

    this.addSql(`alter table "template" drop constraint "template_selected_consultation_id_foreign";`);

    this.addSql(`alter table "document_version" drop constraint "document_version_document_id_foreign";`);

    this.addSql(`alter table "document_file" drop constraint "document_file_version_id_foreign";`);

    this.addSql(`alter table "project_manager" drop constraint "project_manager_user_id_foreign";`);

    this.addSql(`alter table "membership" drop constraint "membership_user_id_foreign";`);

    this.addSql(`alter table "headquarter_admin" drop constraint "headquarter_admin_user_id_foreign";`);

    this.addSql(`alter table "auth_session" drop constraint "auth_session_user_id_foreign";`);

    this.addSql(`alter table "user_partner_role" drop constraint "user_partner_role_user_id_foreign";`);

    this.addSql(`alter table "refresh_token" drop constraint "refresh_token_session_id_foreign";`);

    this.addSql(`drop table if exists "headquarter" cascade;`);

    this.addSql(`drop table if exists "organization" cascade;`);

    this.addSql(`drop table if exists "credit_ledger_entry" cascade;`);

    this.addSql(`drop table if exists "contractor" cascade;`);

    this.addSql(`drop table if exists "partner_role" cascade;`);

    this.addSql(`drop table if exists "signing_key" cascade;`);

    this.addSql(`drop table if exists "trade_category" cascade;`);

    this.addSql(`drop table if exists "trade_category_mapping" cascade;`);

    this.addSql(`drop table if exists "trade_list" cascade;`);

    this.addSql(`drop table if exists "project" cascade;`);

    this.addSql(`drop table if exists "trade_list_trade" cascade;`);

    this.addSql(`drop table if exists "project_trade" cascade;`);

    this.addSql(`drop table if exists "template" cascade;`);

    this.addSql(`drop table if exists "document" cascade;`);

    this.addSql(`drop table if exists "document_version" cascade;`);

    this.addSql(`drop table if exists "document_file" cascade;`);

    this.addSql(`drop table if exists "app_user" cascade;`);

    this.addSql(`drop table if exists "project_manager" cascade;`);

    this.addSql(`drop table if exists "membership" cascade;`);

    this.addSql(`drop table if exists "headquarter_admin" cascade;`);

    this.addSql(`drop table if exists "auth_session" cascade;`);

    this.addSql(`drop table if exists "refresh_token" cascade;`);

    this.addSql(`drop table if exists "user_partner_role" cascade;`);
  }

}
