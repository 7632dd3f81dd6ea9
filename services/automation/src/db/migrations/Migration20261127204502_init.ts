import { Migration } from "@mikro-orm/migrations";

export class Migration20261127204502_init extends Migration {
  override name = "Migration20261127204502_init";

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "automation";`);
    this.addSql(
      `create table "automation"."badges" ("id" varchar(255) not null, "project_id" varchar(255) not null, "test_plan_id" text not null, "environment_id" text not null, "token" varchar(255) not null, "revoked_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "badges_project_id_index" on "automation"."badges" ("project_id");`);
    this.addSql(`alter table "automation"."badges" add constraint "badges_token_unique" unique ("token");`);

    this.addSql(
      `create table "automation"."deliveries" ("id" varchar(255) not null, "webhook_id" varchar(255) not null, "project_id" varchar(255) not null, "event_type" text not null, "run_id" text null, "body" text not null, "state" text not null, "attempts" int not null default 0, "last_response_code" int null, "last_error" text not null default '', "last_attempt_at" timestamptz null, "next_attempt_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "deliveries_webhook_index" on "automation"."deliveries" ("webhook_id", "created_at", "id");`,
    );
    this.addSql(
      `create index "deliveries_due_index" on "automation"."deliveries" ("next_attempt_at") where state = 'pending';`,
    );

    this.addSql(
      `create table "automation"."plan_states" ("project_id" varchar(255) not null, "selection_key" varchar(255) not null, "environment_id" varchar(255) not null, "state" text not null, "run_id" text not null, "updated_at" timestamptz not null, primary key ("project_id", "selection_key", "environment_id"));`,
    );

    this.addSql(`create table "automation"."run_cursor" ("id" serial primary key, "cursor" text not null);`);

    this.addSql(
      `create table "automation"."schedules" ("id" varchar(255) not null, "project_id" varchar(255) not null, "name" text not null, "cron" text not null, "time_zone" text not null, "environment_id" text not null, "test_plan_id" text null, "tags" jsonb null, "state" text not null, "stopped_reason" text not null default '', "acts_for_member_id" text not null, "next_due_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "schedules_project_index" on "automation"."schedules" ("project_id", "name");`);
    this.addSql(
      `create index "schedules_due_index" on "automation"."schedules" ("next_due_at") where state = 'active';`,
    );

    this.addSql(
      `create table "automation"."schedule_ticks" ("schedule_id" varchar(255) not null, "due_at" timestamptz not null, "project_id" varchar(255) not null, "state" text not null, "run_id" text null, "failure" text not null default '', "attempts" int not null default 0, "retry_at" timestamptz not null, "created_at" timestamptz not null, primary key ("schedule_id", "due_at"));`,
    );
    this.addSql(
      `create index "schedule_ticks_pending_index" on "automation"."schedule_ticks" ("retry_at") where state = 'pending';`,
    );

    this.addSql(
      `create table "automation"."webhooks" ("id" varchar(255) not null, "project_id" varchar(255) not null, "url" text not null, "kind" text not null, "events" jsonb not null, "notify_mode" text not null, "paused" boolean not null default false, "secret_sealed" text not null, "previous_secret_sealed" text null, "previous_secret_expires_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "webhooks_project_id_index" on "automation"."webhooks" ("project_id");`);

    this.addSql(
      `alter table "automation"."deliveries" add constraint "deliveries_state_check" check ("state" in ('pending', 'delivered', 'failed'));`,
    );

    this.addSql(
      `alter table "automation"."plan_states" add constraint "plan_states_state_check" check ("state" in ('passing', 'failing'));`,
    );

    this.addSql(
      `alter table "automation"."schedules" add constraint "schedules_name_length" check (char_length(name) between 1 and 100);`,
    );
    this.addSql(
      `alter table "automation"."schedules" add constraint "schedules_one_selection" check ((test_plan_id is null) <> (tags is null));`,
    );
    this.addSql(
      `alter table "automation"."schedules" add constraint "schedules_state_check" check ("state" in ('active', 'paused', 'stopped'));`,
    );

    this.addSql(
      `alter table "automation"."schedule_ticks" add constraint "schedule_ticks_state_check" check ("state" in ('pending', 'started', 'failed'));`,
    );

    this.addSql(
      `alter table "automation"."webhooks" add constraint "webhooks_kind_check" check ("kind" in ('standard', 'slack'));`,
    );
    this.addSql(
      `alter table "automation"."webhooks" add constraint "webhooks_notify_mode_check" check ("notify_mode" in ('failures_and_recoveries', 'every_run'));`,
    );
    // The run follower's one row: from the first run that ever finished.
    this.addSql(`insert into "automation"."run_cursor" ("id", "cursor") values (1, '');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "automation"."badges" cascade;`);
    this.addSql(`drop table if exists "automation"."deliveries" cascade;`);
    this.addSql(`drop table if exists "automation"."plan_states" cascade;`);
    this.addSql(`drop table if exists "automation"."run_cursor" cascade;`);
    this.addSql(`drop table if exists "automation"."schedules" cascade;`);
    this.addSql(`drop table if exists "automation"."schedule_ticks" cascade;`);
    this.addSql(`drop table if exists "automation"."webhooks" cascade;`);

    this.addSql(`drop schema if exists "automation";`);
  }
}
