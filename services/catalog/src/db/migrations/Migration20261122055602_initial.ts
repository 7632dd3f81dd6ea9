import { Migration } from "@mikro-orm/migrations";

export class Migration20261122055602_initial extends Migration {
  override name = "Migration20261122055602_initial";

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "catalog";`);
    this.addSql(
      `create table "catalog"."organizations" ("id" text not null, "name" text not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "organizations_created_index" on "catalog"."organizations" ("created_at", "id");`,
    );

    this.addSql(
      `create table "catalog"."members" ("id" text not null, "organization_id" text not null, "email" text not null, "display_name" text not null, "role" text not null, "created_at" timestamptz not null, "removed_at" timestamptz null, "rights_lost_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(
      `create index "members_organization_created_index" on "catalog"."members" ("organization_id", "created_at", "id");`,
    );
    this.addSql(
      `create unique index "members_organization_email_unique" on catalog.members ("organization_id", lower("email"));`,
    );

    this.addSql(
      `create table "catalog"."projects" ("id" text not null, "organization_id" text not null, "name" text not null, "description" text not null default '', "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "projects_organization_created_index" on "catalog"."projects" ("organization_id", "created_at", "id");`,
    );
    this.addSql(
      `create unique index "projects_organization_name_unique" on catalog.projects ("organization_id", lower("name"));`,
    );

    this.addSql(
      `create table "catalog"."environments" ("id" text not null, "project_id" text not null, "name" text not null, "base_url" text not null, "is_default" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "environments_project_created_index" on "catalog"."environments" ("project_id", "created_at", "id");`,
    );
    this.addSql(
      `create unique index "environments_one_default_per_project" on "catalog"."environments" ("project_id") where is_default;`,
    );

    this.addSql(
      `create table "catalog"."test_cases" ("id" text not null, "project_id" text not null, "name" text not null, "tags" text[] not null default '{}', "tags_lower" text[] not null default '{}', "enabled" boolean not null default true, "steps" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "test_cases_project_created_index" on "catalog"."test_cases" ("project_id", "created_at", "id");`,
    );
    this.addSql(
      `create index "test_cases_tags_lower_index" on "catalog"."test_cases" using gin ("tags_lower");`,
    );

    this.addSql(
      `create table "catalog"."test_plans" ("id" text not null, "project_id" text not null, "name" text not null, "description" text not null default '', "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "test_plans_project_created_index" on "catalog"."test_plans" ("project_id", "created_at", "id");`,
    );

    this.addSql(
      `create table "catalog"."test_plan_cases" ("plan_id" text not null, "position" int not null, "test_case_id" text not null, primary key ("plan_id", "position"));`,
    );
    this.addSql(
      `create index "test_plan_cases_test_case_index" on "catalog"."test_plan_cases" ("test_case_id");`,
    );
    this.addSql(
      `alter table "catalog"."test_plan_cases" add constraint "test_plan_cases_plan_test_case_unique" unique ("plan_id", "test_case_id");`,
    );

    this.addSql(
      `create table "catalog"."variables" ("id" text not null, "project_id" text not null, "name" text not null, "value_ciphertext" bytea not null, "value_iv" bytea not null, "value_tag" bytea not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "variables_project_created_index" on "catalog"."variables" ("project_id", "created_at", "id");`,
    );
    this.addSql(
      `create unique index "variables_project_name_unique" on catalog.variables ("project_id", lower("name"));`,
    );

    this.addSql(
      `alter table "catalog"."organizations" add constraint "organizations_name_length" check (char_length(name) >= 1 and char_length(name) <= 200);`,
    );

    this.addSql(
      `alter table "catalog"."members" add constraint "members_organization_id_foreign" foreign key ("organization_id") references "catalog"."organizations" ("id");`,
    );
    this.addSql(
      `alter table "catalog"."members" add constraint "members_display_name_length" check (char_length(display_name) >= 1 and char_length(display_name) <= 200);`,
    );
    this.addSql(
      `alter table "catalog"."members" add constraint "members_email_length" check (char_length(email) >= 1 and char_length(email) <= 320);`,
    );
    this.addSql(
      `alter table "catalog"."members" add constraint "members_role_check" check ("role" in ('owner', 'admin', 'editor', 'viewer'));`,
    );

    this.addSql(
      `alter table "catalog"."projects" add constraint "projects_organization_id_foreign" foreign key ("organization_id") references "catalog"."organizations" ("id");`,
    );
    this.addSql(
      `alter table "catalog"."projects" add constraint "projects_name_length" check (char_length(name) >= 1 and char_length(name) <= 200);`,
    );
    this.addSql(
      `alter table "catalog"."projects" add constraint "projects_description_length" check (char_length(description) <= 2000);`,
    );

    this.addSql(
      `alter table "catalog"."environments" add constraint "environments_project_id_foreign" foreign key ("project_id") references "catalog"."projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."environments" add constraint "environments_name_length" check (char_length(name) >= 1 and char_length(name) <= 200);`,
    );
    this.addSql(
      `alter table "catalog"."environments" add constraint "environments_base_url_length" check (char_length(base_url) <= 2048);`,
    );

    this.addSql(
      `alter table "catalog"."test_cases" add constraint "test_cases_project_id_foreign" foreign key ("project_id") references "catalog"."projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."test_cases" add constraint "test_cases_name_length" check (char_length(name) >= 1 and char_length(name) <= 200);`,
    );
    this.addSql(
      `alter table "catalog"."test_cases" add constraint "test_cases_tags_count" check (cardinality(tags) <= 50);`,
    );
    this.addSql(
      `alter table "catalog"."test_cases" add constraint "test_cases_steps_is_array" check (jsonb_typeof(steps) = 'array');`,
    );
    this.addSql(
      `create or replace function "catalog"."test_cases_set_tags_lower_fn"() returns trigger as $$ begin new.tags_lower := array(select lower(t) from unnest(new.tags) as t); return new; end; $$ language plpgsql;`,
    );
    this.addSql(
      `create trigger "set_tags_lower" BEFORE INSERT OR UPDATE on "catalog"."test_cases" for each ROW execute function "catalog"."test_cases_set_tags_lower_fn"();`,
    );

    this.addSql(
      `alter table "catalog"."test_plans" add constraint "test_plans_project_id_foreign" foreign key ("project_id") references "catalog"."projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."test_plans" add constraint "test_plans_name_length" check (char_length(name) >= 1 and char_length(name) <= 200);`,
    );
    this.addSql(
      `alter table "catalog"."test_plans" add constraint "test_plans_description_length" check (char_length(description) <= 2000);`,
    );

    this.addSql(
      `alter table "catalog"."test_plan_cases" add constraint "test_plan_cases_plan_id_foreign" foreign key ("plan_id") references "catalog"."test_plans" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."test_plan_cases" add constraint "test_plan_cases_test_case_id_foreign" foreign key ("test_case_id") references "catalog"."test_cases" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."test_plan_cases" add constraint "test_plan_cases_position_not_negative" check (position >= 0);`,
    );

    this.addSql(
      `alter table "catalog"."variables" add constraint "variables_project_id_foreign" foreign key ("project_id") references "catalog"."projects" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."variables" add constraint "variables_name_format" check (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$');`,
    );
    this.addSql(
      `alter table "catalog"."variables" add constraint "variables_value_iv_length" check (octet_length(value_iv) = 12);`,
    );
    this.addSql(
      `alter table "catalog"."variables" add constraint "variables_value_tag_length" check (octet_length(value_tag) = 16);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "catalog"."members" drop constraint "members_organization_id_foreign";`);
    this.addSql(`alter table "catalog"."projects" drop constraint "projects_organization_id_foreign";`);
    this.addSql(`alter table "catalog"."environments" drop constraint "environments_project_id_foreign";`);
    this.addSql(`alter table "catalog"."test_cases" drop constraint "test_cases_project_id_foreign";`);
    this.addSql(`alter table "catalog"."test_plans" drop constraint "test_plans_project_id_foreign";`);
    this.addSql(`alter table "catalog"."variables" drop constraint "variables_project_id_foreign";`);
    this.addSql(
      `alter table "catalog"."test_plan_cases" drop constraint "test_plan_cases_test_case_id_foreign";`,
    );
    this.addSql(`alter table "catalog"."test_plan_cases" drop constraint "test_plan_cases_plan_id_foreign";`);

    this.addSql(`drop table if exists "catalog"."organizations" cascade;`);
    this.addSql(`drop table if exists "catalog"."members" cascade;`);
    this.addSql(`drop table if exists "catalog"."projects" cascade;`);
    this.addSql(`drop table if exists "catalog"."environments" cascade;`);
    this.addSql(`drop trigger if exists "set_tags_lower" on "catalog"."test_cases";`);
    this.addSql(`drop function if exists "catalog"."test_cases_set_tags_lower_fn"();`);
    this.addSql(`drop table if exists "catalog"."test_cases" cascade;`);
    this.addSql(`drop table if exists "catalog"."test_plans" cascade;`);
    this.addSql(`drop table if exists "catalog"."test_plan_cases" cascade;`);
    this.addSql(`drop table if exists "catalog"."variables" cascade;`);

    this.addSql(`drop schema if exists "catalog";`);
  }
}
