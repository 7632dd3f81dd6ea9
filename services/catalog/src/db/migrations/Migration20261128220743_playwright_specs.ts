import { Migration } from "@mikro-orm/migrations";

/**
 * Playwright spec cases (catalog.proto TestCase.playwright, playwright.proto): a test case holds
 * steps or a spec with its helper files, never both nor neither; kept versions hold it too (older
 * versions, all of steps, null). Content imports match a spec case by its spec's path, so that
 * path is indexed within the project.
 */
export class Migration20261128220743_playwright_specs extends Migration {
  override name = "Migration20261128220743_playwright_specs";

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalog"."test_cases" add "playwright" jsonb null;`);
    this.addSql(
      `create index "test_cases_spec_path_index" on catalog.test_cases ("project_id", (("playwright" -> 'spec') ->> 'path')) where "playwright" is not null;`,
    );
    this.addSql(
      `alter table "catalog"."test_cases" add constraint "test_cases_steps_or_playwright" check ((playwright is null) = (jsonb_array_length(steps) > 0));`,
    );

    this.addSql(`alter table "catalog"."test_case_versions" add "playwright" jsonb null;`);
    this.addSql(
      `alter table "catalog"."test_case_versions" add constraint "test_case_versions_steps_or_playwright" check ((playwright is null) = (jsonb_array_length(steps) > 0));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(
      `alter table "catalog"."test_case_versions" drop constraint "test_case_versions_steps_or_playwright";`,
    );
    this.addSql(`alter table "catalog"."test_case_versions" drop column "playwright";`);

    this.addSql(`drop index "catalog"."test_cases_spec_path_index";`);
    this.addSql(`alter table "catalog"."test_cases" drop constraint "test_cases_steps_or_playwright";`);
    this.addSql(`alter table "catalog"."test_cases" drop column "playwright";`);
  }
}
