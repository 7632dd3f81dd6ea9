import { Migration } from "@mikro-orm/migrations";

/**
 * Each test records the version of the test case its name and steps were taken from (the catalog's
 * TestCase.version), so the console links a test to exactly what it ran. Tests stored before
 * versions were kept get 0 (unknown): what they ran may be older than the test case's version 1.
 * Written by hand: the schema diff would also drop the run-version trigger, which the entities
 * cannot declare (Migration20261125000000_run_version).
 */
export class Migration20261125013926_test_case_version extends Migration {
  override name = "Migration20261125013926_test_case_version";

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs"."test_results" add "test_case_version" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs"."test_results" drop column "test_case_version";`);
  }
}
