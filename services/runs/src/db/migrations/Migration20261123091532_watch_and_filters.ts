import { Migration } from "@mikro-orm/migrations";

export class Migration20261123091532_watch_and_filters extends Migration {
  override name = "Migration20261123091532_watch_and_filters";

  override up(): void | Promise<void> {
    this.addSql(
      `create index "runs_project_status_created_index" on "runs"."runs" ("project_id", "status", "created_at", "id");`,
    );
    this.addSql(
      `create index "runs_plan_created_index" on "runs"."runs" ("test_plan_id", "created_at", "id") where test_plan_id is not null;`,
    );
    this.addSql(
      `create index "runs_environment_created_index" on "runs"."runs" ("environment_id", "created_at", "id");`,
    );

    this.addSql(`alter table "runs"."test_results" add "failed_step" int null;`);
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_failed_step_when_failed" check (failed_step is null or (status = 'failed' and failed_step >= 1));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "runs"."runs_project_status_created_index";`);
    this.addSql(`drop index "runs"."runs_plan_created_index";`);
    this.addSql(`drop index "runs"."runs_environment_created_index";`);

    this.addSql(`alter table "runs"."test_results" drop constraint "test_results_failed_step_when_failed";`);
    this.addSql(`alter table "runs"."test_results" drop column "failed_step";`);
  }
}
