import { Migration } from "@mikro-orm/migrations";

/**
 * A test of a Playwright spec case carries the spec and its helper files as they were when the run
 * started (catalog.proto SelectedTestCase.playwright), handed to the executor that claims it
 * (TestAssignment.playwright); null for a test of steps, as every test before was.
 */
export class Migration20261128221505_playwright_specs extends Migration {
  override name = "Migration20261128221505_playwright_specs";

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs"."test_results" add "playwright" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs"."test_results" drop column "playwright";`);
  }
}
