import { Migration } from "@mikro-orm/migrations";

/**
 * TestCase.record_trace (catalog.proto): whether every execution of a test case's browser steps
 * records a Playwright trace, not only failed ones. Part of a test case's versioned content, so its
 * kept versions hold it too; existing test cases and versions record on failure only (false).
 */
export class Migration20261125042617_record_trace extends Migration {
  override name = "Migration20261125042617_record_trace";

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalog"."test_cases" add "record_trace" boolean not null default false;`);

    this.addSql(
      `alter table "catalog"."test_case_versions" add "record_trace" boolean not null default false;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "catalog"."test_case_versions" drop column "record_trace";`);

    this.addSql(`alter table "catalog"."test_cases" drop column "record_trace";`);
  }
}
