import { Migration } from "@mikro-orm/migrations";

export class Migration20261123020719_executor_activity extends Migration {
  override name = "Migration20261123020719_executor_activity";

  override up(): void | Promise<void> {
    this.addSql(
      `create index "test_results_started_index" on "runs"."test_results" ("started_at") where started_at is not null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "runs"."test_results_started_index";`);
  }
}
