import { Migration } from "@mikro-orm/migrations";

/**
 * Retries by policy (catalog.proto TestCase.retries, TestPlan.retries): how many times a failed
 * attempt is run again, 0 to 3. A test case always has a count (existing ones 0: no retry, as
 * before); a plan has one only when it sets it (null: each test case's own apply). Both are part
 * of the versioned content, so kept versions hold them too (older versions as they were: 0, null).
 */
export class Migration20261128183000_retries extends Migration {
  override name = "Migration20261128183000_retries";

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalog"."test_cases" add "retries" int not null default 0;`);
    this.addSql(
      `alter table "catalog"."test_cases" add constraint "test_cases_retries_range" check (retries >= 0 and retries <= 3);`,
    );
    this.addSql(`alter table "catalog"."test_case_versions" add "retries" int not null default 0;`);
    this.addSql(`alter table "catalog"."test_plans" add "retries" int null;`);
    this.addSql(
      `alter table "catalog"."test_plans" add constraint "test_plans_retries_range" check (retries >= 0 and retries <= 3);`,
    );
    this.addSql(`alter table "catalog"."test_plan_versions" add "retries" int null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "catalog"."test_plan_versions" drop column "retries";`);
    this.addSql(`alter table "catalog"."test_plans" drop constraint "test_plans_retries_range";`);
    this.addSql(`alter table "catalog"."test_plans" drop column "retries";`);
    this.addSql(`alter table "catalog"."test_case_versions" drop column "retries";`);
    this.addSql(`alter table "catalog"."test_cases" drop constraint "test_cases_retries_range";`);
    this.addSql(`alter table "catalog"."test_cases" drop column "retries";`);
  }
}
