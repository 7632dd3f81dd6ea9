import { Migration } from "@mikro-orm/migrations";

/**
 * Artifacts (docs/runs.md, "Artifacts"): their metadata (`artifacts`), their bytes when the store is
 * PostgreSQL (`artifact_contents`), the projects whose artifacts are purged (`purged_projects`); a
 * run's record_traces and a test's record_trace; each test's step results.
 * Written by hand: the schema diff would also drop the run-version trigger, which the entities
 * cannot declare (Migration20261125000000_run_version).
 */
export class Migration20261125042741_artifacts extends Migration {
  override name = "Migration20261125042741_artifacts";

  override up(): void | Promise<void> {
    this.addSql(
      `create table "runs"."artifact_contents" ("key" text not null, "content" bytea not null, primary key ("key"));`,
    );
    // PNGs and zips are compressed already: kept out of line without another compression attempt.
    this.addSql(`alter table "runs"."artifact_contents" alter column "content" set storage external;`);
    this.addSql(
      `create table "runs"."purged_projects" ("project_id" text not null, "purged_at" timestamptz not null, primary key ("project_id"));`,
    );
    this.addSql(
      `create table "runs"."artifacts" ("id" text not null, "project_id" text not null, "run_id" text not null, "test_result_id" text not null, "attempt" int not null, "kind" text not null, "name" text not null, "content_type" text not null, "size_bytes" bigint not null, "step" int not null, "state" text not null default 'pending', "created_at" timestamptz not null, "expires_at" timestamptz not null, "delete_after" timestamptz null, primary key ("id"));`,
    );
    this.addSql(
      `create index "artifacts_test_result_index" on "runs"."artifacts" ("test_result_id", "created_at");`,
    );
    this.addSql(`create index "artifacts_run_index" on "runs"."artifacts" ("run_id");`);
    this.addSql(`create index "artifacts_project_index" on "runs"."artifacts" ("project_id");`);
    this.addSql(
      `create index "artifacts_expiry_index" on "runs"."artifacts" ("expires_at") where state = 'stored';`,
    );
    this.addSql(
      `create index "artifacts_pending_index" on "runs"."artifacts" ("created_at") where state = 'pending';`,
    );
    this.addSql(
      `create index "artifacts_delete_after_index" on "runs"."artifacts" ("delete_after") where state = 'deleting';`,
    );
    // No cascade: a row goes only after its bytes (the sweeper), never with its run or test.
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_run_id_foreign" foreign key ("run_id") references "runs"."runs" ("id");`,
    );
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_test_result_id_foreign" foreign key ("test_result_id") references "runs"."test_results" ("id");`,
    );
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_name_length" check (char_length(name) between 1 and 100);`,
    );
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_numbers_not_negative" check (size_bytes >= 0 and step >= 0 and attempt >= 1);`,
    );
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_deleting_has_time" check ((state = 'deleting') = (delete_after is not null));`,
    );
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_kind_check" check ("kind" in ('screenshot', 'trace', 'browser_log'));`,
    );
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_state_check" check ("state" in ('pending', 'stored', 'deleting'));`,
    );

    this.addSql(`alter table "runs"."runs" add "record_traces" boolean not null default false;`);
    this.addSql(
      `alter table "runs"."test_results" add "record_trace" boolean not null default false, add "step_results" jsonb not null default '[]';`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_step_results_is_array" check (jsonb_typeof(step_results) = 'array');`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "runs"."artifact_contents" cascade;`);
    this.addSql(`drop table if exists "runs"."purged_projects" cascade;`);
    this.addSql(`drop table if exists "runs"."artifacts" cascade;`);
    this.addSql(`alter table "runs"."runs" drop column "record_traces";`);
    this.addSql(`alter table "runs"."test_results" drop constraint "test_results_step_results_is_array";`);
    this.addSql(`alter table "runs"."test_results" drop column "record_trace", drop column "step_results";`);
  }
}
