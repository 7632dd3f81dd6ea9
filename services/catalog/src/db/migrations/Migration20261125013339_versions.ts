import { Migration } from "@mikro-orm/migrations";

/**
 * Versions of test cases and test plans (catalog.proto, TestCase.version): each row gets its
 * version (existing ones 1) and every stored version's snapshot is kept with who stored it and
 * when, the latest 100 per item. Existing test cases and plans get their version 1 snapshot from
 * what they hold now, stored at their updated_at by nobody recorded (ChangedBy unset).
 */
export class Migration20261125013339_versions extends Migration {
  override name = "Migration20261125013339_versions";

  override up(): void | Promise<void> {
    this.addSql(
      `create table "catalog"."test_case_versions" ("test_case_id" text not null, "version" int not null, "name" text not null, "tags" text[] not null, "enabled" boolean not null, "steps" jsonb not null, "changed_at" timestamptz not null, "changed_by_member_id" text null, "changed_by_operator" text null, primary key ("test_case_id", "version"));`,
    );

    this.addSql(
      `create table "catalog"."test_plan_versions" ("plan_id" text not null, "version" int not null, "name" text not null, "description" text not null, "test_case_ids" text[] not null, "changed_at" timestamptz not null, "changed_by_member_id" text null, "changed_by_operator" text null, primary key ("plan_id", "version"));`,
    );

    this.addSql(`alter table "catalog"."test_cases" add "version" int not null default 1;`);
    this.addSql(
      `alter table "catalog"."test_cases" add constraint "test_cases_version_positive" check (version >= 1);`,
    );

    this.addSql(`alter table "catalog"."test_plans" add "version" int not null default 1;`);
    this.addSql(
      `alter table "catalog"."test_plans" add constraint "test_plans_version_positive" check (version >= 1);`,
    );

    this.addSql(
      `alter table "catalog"."test_case_versions" add constraint "test_case_versions_test_case_id_foreign" foreign key ("test_case_id") references "catalog"."test_cases" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."test_case_versions" add constraint "test_case_versions_version_positive" check (version >= 1);`,
    );
    this.addSql(
      `alter table "catalog"."test_case_versions" add constraint "test_case_versions_changed_by_one_kind" check (changed_by_member_id is null or changed_by_operator is null);`,
    );

    this.addSql(
      `alter table "catalog"."test_plan_versions" add constraint "test_plan_versions_plan_id_foreign" foreign key ("plan_id") references "catalog"."test_plans" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog"."test_plan_versions" add constraint "test_plan_versions_version_positive" check (version >= 1);`,
    );
    this.addSql(
      `alter table "catalog"."test_plan_versions" add constraint "test_plan_versions_changed_by_one_kind" check (changed_by_member_id is null or changed_by_operator is null);`,
    );

    this.addSql(`insert into "catalog"."test_case_versions" ("test_case_id", "version", "name", "tags", "enabled", "steps", "changed_at")
      select "id", 1, "name", "tags", "enabled", "steps", "updated_at" from "catalog"."test_cases";`);
    this.addSql(`insert into "catalog"."test_plan_versions" ("plan_id", "version", "name", "description", "test_case_ids", "changed_at")
      select tp."id", 1, tp."name", tp."description",
        array(select pc."test_case_id" from "catalog"."test_plan_cases" pc where pc."plan_id" = tp."id" order by pc."position"),
        tp."updated_at"
      from "catalog"."test_plans" tp;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "catalog"."test_case_versions" cascade;`);
    this.addSql(`drop table if exists "catalog"."test_plan_versions" cascade;`);

    this.addSql(`alter table "catalog"."test_cases" drop constraint "test_cases_version_positive";`);
    this.addSql(`alter table "catalog"."test_cases" drop column "version";`);

    this.addSql(`alter table "catalog"."test_plans" drop constraint "test_plans_version_positive";`);
    this.addSql(`alter table "catalog"."test_plans" drop column "version";`);
  }
}
