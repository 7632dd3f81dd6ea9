import { Migration } from "@mikro-orm/migrations";

export class Migration20261122064315_initial extends Migration {
  override name = "Migration20261122064315_initial";

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "runs";`);
    this.addSql(
      `create table "runs"."runs" ("id" text not null, "project_id" text not null, "environment_id" text not null, "environment_base_url" text not null, "test_plan_id" text null, "name" text not null, "status" text not null, "skip_reason" text null, "total_tests" int not null, "passed_tests" int not null default 0, "failed_tests" int not null default 0, "skipped_tests" int not null default 0, "credits_charged" int not null default 0, "charge_state" text not null default 'pending', "refund_due" int not null default 0, "refund_reason" text null, "refunded_at" timestamptz null, "started_at" timestamptz null, "finished_at" timestamptz null, "created_at" timestamptz not null, "started_by_key_id" text null, "started_by_member_id" text null, primary key ("id"));`,
    );
    this.addSql(
      `create index "runs_project_created_index" on "runs"."runs" ("project_id", "created_at", "id");`,
    );
    this.addSql(
      `create index "runs_unfinished_index" on "runs"."runs" ("created_at") where status in ('queued', 'running');`,
    );
    this.addSql(
      `create index "runs_repair_index" on "runs"."runs" ("created_at") where charge_state <> 'charged' or (refund_due > 0 and refunded_at is null);`,
    );

    this.addSql(
      `create table "runs"."test_results" ("id" text not null, "run_id" text not null, "test_case_id" text not null, "name" text not null, "position" int not null, "status" text not null, "steps" jsonb not null, "summary" text null, "duration_ms" int null, "attempt" int not null default 0, "lapsed_leases" int not null default 0, "lease_owner" text null, "lease_token" text null, "lease_expires_at" timestamptz null, "started_at" timestamptz null, "finished_at" timestamptz null, "queued_at" timestamptz not null, "published_at" timestamptz null, "publish_count" int not null default 0, "refundable" boolean not null default false, "skip_reason" text null, primary key ("id"));`,
    );
    this.addSql(
      `create index "test_results_pending_index" on "runs"."test_results" ("status", "lease_expires_at") where status in ('queued', 'running');`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_run_position_unique" unique ("run_id", "position");`,
    );

    this.addSql(
      `alter table "runs"."runs" add constraint "runs_name_length" check (char_length(name) >= 1 and char_length(name) <= 200);`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_finished_at_matches_status" check ((finished_at is not null) = (status in ('passed', 'failed', 'skipped')));`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_skip_reason_only_when_skipped" check (skip_reason is null or status = 'skipped');`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_counts_consistent" check (passed_tests >= 0 and failed_tests >= 0 and skipped_tests >= 0 and passed_tests + failed_tests + skipped_tests <= total_tests);`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_credits_charged_not_negative" check (credits_charged >= 0);`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_refund_within_charge" check (refund_due >= 0 and refund_due <= credits_charged);`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_status_check" check ("status" in ('queued', 'running', 'passed', 'failed', 'skipped'));`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_skip_reason_check" check ("skip_reason" in ('environment_unreachable', 'cancelled', 'no_executor'));`,
    );
    this.addSql(
      `alter table "runs"."runs" add constraint "runs_charge_state_check" check ("charge_state" in ('pending', 'charged', 'abandoned'));`,
    );

    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_run_id_foreign" foreign key ("run_id") references "runs"."runs" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_summary_length" check (char_length(summary) <= 300);`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_finished_at_matches_status" check ((finished_at is not null) = (status in ('passed', 'failed', 'skipped')));`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_running_is_leased" check (status <> 'running' or (lease_token is not null and lease_expires_at is not null));`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_numbers_not_negative" check (position >= 0 and attempt >= 0 and lapsed_leases >= 0 and duration_ms >= 0 and publish_count >= 0);`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_steps_is_array" check (jsonb_typeof(steps) = 'array');`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_status_check" check ("status" in ('queued', 'running', 'passed', 'failed', 'skipped'));`,
    );
    this.addSql(
      `alter table "runs"."test_results" add constraint "test_results_skip_reason_check" check ("skip_reason" in ('environment_unreachable', 'cancelled', 'no_executor'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs"."test_results" drop constraint "test_results_run_id_foreign";`);

    this.addSql(`drop table if exists "runs"."runs" cascade;`);
    this.addSql(`drop table if exists "runs"."test_results" cascade;`);

    this.addSql(`drop schema if exists "runs";`);
  }
}
