import { Migration } from "@mikro-orm/migrations";

const visible = (row: "old" | "new") =>
  `(${row}.status, ${row}.summary, ${row}.duration_ms, ${row}.failed_step, ${row}.attempt, ${row}.started_at, ${row}.finished_at)`;
const counted = (row: "old" | "new") =>
  `(${row}.refundable, ${row}.skip_reason, ${row}.flaky, ${row}.quarantined)`;

/**
 * Test health and quarantine (issue 40; docs/rest-api.md, "Test health and quarantine").
 *
 * - `case_health`: one row per test case and environment, kept current by the statement that ends
 *   a test (the trigger below, so every path that ends one, the executors' fast path included,
 *   records it): the latest results within the project's window (`recent`, newest first, at most
 *   200 small entries), the state they give (`judged`), the failures among them and the time of
 *   the latest (what the health list orders by), the min_results they were judged with, where the
 *   current failures began, and all-time counts that outlive the history's retention. Reads never
 *   recount results.
 * - `quarantines` and their `quarantine_events` (the automation service's webhooks follow them).
 * - A test remembers whether its case was quarantined when its run started; the run counts its
 *   quarantined failures, which its status leaves out (store/settle.ts).
 * - `health_settings`: a project's window and retention, defaults when it has no row.
 *
 * The history itself is the test results (`test_results_history` index).
 */
export class Migration20261128200000_test_health extends Migration {
  override name = "Migration20261128200000_test_health";

  override up(): void | Promise<void> {
    this.addSql(`
      create table "runs"."health_settings" (
        "project_id" text not null primary key,
        "window_results" int not null default 30 check (window_results between 5 and 200),
        "window_days" int not null default 14 check (window_days between 1 and 90),
        "min_results" int not null default 5 check (min_results between 2 and 50 and min_results <= window_results),
        "history_retention_days" int not null default 90 check (history_retention_days between 7 and 365),
        "updated_at" timestamptz not null default now());`);
    this.addSql(`
      create table "runs"."case_health" (
        "project_id" text not null,
        "test_case_id" text not null,
        "environment_id" text not null,
        "name" text not null default '',
        "case_version" int not null default 0,
        "judged" text not null default 'unknown'
          check (judged in ('unknown', 'stable', 'flaky', 'failing', 'new_failure')),
        "recent" jsonb not null default '[]' check (jsonb_typeof(recent) = 'array'),
        "fail_streak" int not null default 0,
        "failing_since" jsonb null,
        "last_failure" jsonb null,
        "last_result" jsonb null,
        "window_failures" int not null default 0,
        "last_result_at" timestamptz null,
        "min_results" int not null default 5,
        "results_total" bigint not null default 0,
        "failures_total" bigint not null default 0,
        "updated_at" timestamptz not null default now(),
        primary key ("project_id", "test_case_id", "environment_id"));`);
    this.addSql(
      `create index "case_health_by_state" on "runs"."case_health" ("project_id", "environment_id", "judged", "window_failures" desc, "last_result_at" desc);`,
    );
    this.addSql(`
      create table "runs"."quarantines" (
        "id" text not null primary key,
        "project_id" text not null,
        "test_case_id" text not null,
        "reason" text not null,
        "started_at" timestamptz not null default now(),
        "expires_at" timestamptz not null,
        "started_by_member_id" text null,
        "ended_at" timestamptz null,
        "end_kind" text null check (end_kind in ('lifted', 'expired', 'replaced')),
        "lifted_by_member_id" text null,
        check ((ended_at is null) = (end_kind is null)));`);
    // At most one quarantine lasting (not ended) per case.
    this.addSql(
      `create unique index "quarantines_one_open" on "runs"."quarantines" ("project_id", "test_case_id") where ended_at is null;`,
    );
    this.addSql(
      `create index "quarantines_expiring" on "runs"."quarantines" ("expires_at") where ended_at is null;`,
    );
    this.addSql(`
      create table "runs"."quarantine_events" (
        "seq" bigserial primary key,
        "type" text not null check (type in ('started', 'lifted', 'expired')),
        "quarantine_id" text not null references "runs"."quarantines" ("id") on delete cascade,
        "at" timestamptz not null default now());`);
    this.addSql(`alter table "runs"."test_results" add "quarantined" boolean not null default false;`);
    this.addSql(`alter table "runs"."runs" add "quarantined_failures" int not null default 0;`);
    // The history of a case: its results newest first (GetTestCaseHistory's cursor is (finished_at, id)).
    this.addSql(
      `create index "test_results_history" on "runs"."test_results" ("test_case_id", "finished_at" desc, "id" desc) where finished_at is not null;`,
    );

    this.addSql(`
      create or replace function runs.advance_run_version() returns trigger language plpgsql as $$
      declare
        changed boolean := ${visible("old")} is distinct from ${visible("new")};
        next_version bigint;
      begin
        update runs.runs set
          version = version + changed::int,
          passed_tests = passed_tests + (new.status = 'passed')::int - (old.status = 'passed')::int,
          failed_tests = failed_tests + (new.status = 'failed')::int - (old.status = 'failed')::int,
          skipped_tests = skipped_tests + (new.status = 'skipped')::int - (old.status = 'skipped')::int,
          refundable_tests = refundable_tests + new.refundable::int - old.refundable::int,
          no_executor_tests = no_executor_tests
            + (new.skip_reason is not distinct from 'no_executor')::int
            - (old.skip_reason is not distinct from 'no_executor')::int,
          flaky_tests = flaky_tests + new.flaky::int - old.flaky::int,
          quarantined_failures = quarantined_failures
            + (new.status = 'failed' and new.quarantined)::int - (old.status = 'failed' and old.quarantined)::int
        where id = new.run_id returning version into next_version;
        if changed then new.version := next_version; end if;
        return new;
      end $$;`);
    this.addSql(`drop trigger test_results_advance_run_version on runs.test_results;`);
    this.addSql(`
      create trigger test_results_advance_run_version before update on runs.test_results for each row
      when ((${visible("old")}, ${counted("old")}) is distinct from (${visible("new")}, ${counted("new")}))
      execute function runs.advance_run_version();`);

    // A result recorded in its case's health (docs/rest-api.md, "Test health and quarantine"):
    // PASSED or FAILED, the system's failures left out; judged on the results of the latest
    // result's case version within the window.
    this.addSql(`
      create function runs.record_case_health() returns trigger language plpgsql as $$
      declare
        v_run runs.runs;
        v_window_results int := 30;
        v_window_days int := 14;
        v_min int := 5;
        v_outcome text;
        v_ref jsonb;
        v_health runs.case_health;
        v_recent jsonb;
        v_passes int;
        v_failures int;
        v_streak int;
        v_judged text;
      begin
        if new.status = 'failed' and new.cause in ('browser', 'executor_lost', 'no_executor') then
          return null;
        end if;
        select * into v_run from runs.runs where id = new.run_id;
        select s.window_results, s.window_days, s.min_results into v_window_results, v_window_days, v_min
        from runs.health_settings s where s.project_id = v_run.project_id;
        if not found then v_window_results := 30; v_window_days := 14; v_min := 5; end if;
        v_outcome := case when new.status = 'failed' then 'f' when new.flaky then 'r' else 'p' end;
        v_ref := jsonb_build_object('run', new.run_id, 'id', new.id, 'v', new.test_case_version, 'at', now());
        insert into runs.case_health (project_id, test_case_id, environment_id)
        values (v_run.project_id, new.test_case_id, v_run.environment_id) on conflict do nothing;
        select * into v_health from runs.case_health
        where project_id = v_run.project_id and test_case_id = new.test_case_id and environment_id = v_run.environment_id
        for update;
        select coalesce(jsonb_agg(e order by n), '[]'::jsonb) into v_recent
        from jsonb_array_elements(jsonb_build_array(v_ref || jsonb_build_object('o', v_outcome, 'd', new.duration_ms))
                                  || v_health.recent) with ordinality as x(e, n)
        where n <= v_window_results and (e->>'at')::timestamptz > now() - v_window_days * interval '1 day';
        select count(*) filter (where e->>'o' in ('p', 'r')), count(*) filter (where e->>'o' in ('f', 'r'))
        into v_passes, v_failures
        from jsonb_array_elements(v_recent) e where (e->>'v')::int = new.test_case_version;
        v_streak := case when v_outcome = 'f' then v_health.fail_streak + 1 else 0 end;
        if v_outcome = 'f' then
          if (v_passes = 0 and v_failures >= 2) or v_streak >= 3 then v_judged := 'failing';
          elsif v_passes > 0 and v_failures >= 2 then v_judged := 'flaky';
          else v_judged := 'new_failure';
          end if;
        elsif v_failures > 0 then v_judged := 'flaky';
        elsif v_passes < v_min then v_judged := 'unknown';
        else v_judged := 'stable';
        end if;
        update runs.case_health set
          name = new.name, case_version = new.test_case_version, judged = v_judged, recent = v_recent,
          fail_streak = v_streak,
          failing_since = case when v_outcome <> 'f' then null when fail_streak = 0 then v_ref else failing_since end,
          last_failure = case when v_outcome in ('f', 'r') then v_ref else last_failure end,
          last_result = v_ref,
          last_result_at = now(),
          window_failures = (select count(*) from jsonb_array_elements(v_recent) e where e->>'o' <> 'p'),
          min_results = v_min,
          results_total = results_total + 1,
          failures_total = failures_total + (v_outcome in ('f', 'r'))::int,
          updated_at = now()
        where project_id = v_run.project_id and test_case_id = new.test_case_id and environment_id = v_run.environment_id;
        return null;
      end $$;`);
    this.addSql(`
      create trigger test_results_record_case_health after update on runs.test_results for each row
      when (old.status in ('queued', 'running') and new.status in ('passed', 'failed'))
      execute function runs.record_case_health();`);
  }

  override down(): void | Promise<void> {
    this.addSql("drop trigger test_results_record_case_health on runs.test_results;");
    this.addSql("drop function runs.record_case_health();");
    this.addSql(`drop trigger test_results_advance_run_version on runs.test_results;`);
    this.addSql(`
      create trigger test_results_advance_run_version before update on runs.test_results for each row
      when ((${visible("old")}, (old.refundable, old.skip_reason, old.flaky)) is distinct from (${visible("new")}, (new.refundable, new.skip_reason, new.flaky)))
      execute function runs.advance_run_version();`);
    this.addSql(`drop index "runs"."test_results_history";`);
    this.addSql(`alter table "runs"."runs" drop column "quarantined_failures";`);
    this.addSql(`alter table "runs"."test_results" drop column "quarantined";`);
    this.addSql(`drop table "runs"."quarantine_events";`);
    this.addSql(`drop table "runs"."quarantines";`);
    this.addSql(`drop table "runs"."case_health";`);
    this.addSql(`drop table "runs"."health_settings";`);
  }
}
