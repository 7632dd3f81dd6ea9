import { Migration } from "@mikro-orm/migrations";

const visible = (row: "old" | "new") =>
  `(${row}.status, ${row}.summary, ${row}.duration_ms, ${row}.failed_step, ${row}.attempt, ${row}.started_at, ${row}.finished_at)`;
const counted = (row: "old" | "new") => `(${row}.refundable, ${row}.skip_reason, ${row}.flaky)`;

/** The causes of FailureCause (proto/testrun/runs/v1/runs.proto), as stored. */
const causes =
  "'assertion', 'locator', 'timeout', 'network', 'egress_refused', 'environment_unreachable', 'browser', 'executor_lost', 'no_executor'";

/**
 * Attempts, retries and causes (issue 39). A test keeps its current or last attempt in its own
 * columns, as before; the attempts that ended without ending the test (retried, executor lost,
 * handed back) are appended to `earlier_attempts`, so the usual test (one attempt) costs no write
 * more than before. `retries` is the test's policy, `retries_used` the failed attempts retried
 * for it, `failed_attempts` those that failed with a cause of the test (what makes a later pass
 * flaky). The run counts its flaky tests as it counts the others (the counters' trigger).
 *
 * CompleteTest's fast path (Migration20261128160000_lease_functions) now takes the cause and does
 * only what ends the test: a FAILED report that the test's retries allow to retry, or one with the
 * system's cause BROWSER, is left to the service's transaction (store/leases.ts).
 */
export class Migration20261128190000_attempts extends Migration {
  override name = "Migration20261128190000_attempts";

  override up(): void | Promise<void> {
    this.addSql(`
      alter table "runs"."test_results"
        add "retries" int not null default 0,
        add "retries_used" int not null default 0,
        add "failed_attempts" int not null default 0,
        add "flaky" boolean not null default false,
        add "cause" text null,
        add "earlier_attempts" jsonb not null default '[]',
        add constraint "test_results_retries_in_range" check (retries between 0 and 3 and retries_used between 0 and retries and failed_attempts >= 0),
        add constraint "test_results_cause_check" check (cause in (${causes})),
        add constraint "test_results_earlier_attempts_is_array" check (jsonb_typeof(earlier_attempts) = 'array');`);
    this.addSql(`alter table "runs"."runs" add "flaky_tests" int not null default 0;`);
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
          flaky_tests = flaky_tests + new.flaky::int - old.flaky::int
        where id = new.run_id returning version into next_version;
        if changed then new.version := next_version; end if;
        return new;
      end $$;`);
    this.addSql(`drop trigger test_results_advance_run_version on runs.test_results;`);
    this.addSql(`
      create trigger test_results_advance_run_version before update on runs.test_results for each row
      when ((${visible("old")}, ${counted("old")}) is distinct from (${visible("new")}, ${counted("new")}))
      execute function runs.advance_run_version();`);
    this.addSql("drop function runs.complete_running_test(text, text, text, text, int, int, jsonb, int);");
    this.addSql(`
      create function runs.complete_running_test(p_id text, p_token text, p_status text, p_summary text,
        p_duration_ms int, p_failed_step int, p_step_results jsonb, p_min_steps int, p_cause text)
      returns json language plpgsql as $$
      declare
        v_run runs.runs;
        v_test json;
      begin
        select r.* into v_run from runs.runs r
        where r.id = (select run_id from runs.test_results where id = p_id) and r.charge_state = 'charged'
        for update;
        if not found or v_run.total_tests - v_run.passed_tests - v_run.failed_tests - v_run.skipped_tests <= 1
          or exists (select 1 from runs.artifacts a where a.test_result_id = p_id) then
          return null;
        end if;
        update runs.test_results t set status = p_status, summary = p_summary, duration_ms = p_duration_ms,
          failed_step = p_failed_step, step_results = p_step_results, finished_at = now(), lease_expires_at = null,
          cause = p_cause, flaky = (p_status = 'passed' and t.failed_attempts > 0)
        where t.id = p_id and t.run_id = v_run.id and t.status = 'running' and t.lease_token = p_token
          and jsonb_array_length(t.steps) >= p_min_steps
          and (p_status <> 'failed' or (p_cause <> 'browser' and t.retries_used >= t.retries))
        returning row_to_json(t) into v_test;
        if v_test is null then return null; end if;
        return json_build_object('run', row_to_json(v_run), 'test', v_test);
      end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(
      "drop function runs.complete_running_test(text, text, text, text, int, int, jsonb, int, text);",
    );
    this.addSql(`drop trigger test_results_advance_run_version on runs.test_results;`);
    this.addSql(`
      create trigger test_results_advance_run_version before update on runs.test_results for each row
      when ((${visible("old")}, (old.refundable, old.skip_reason)) is distinct from (${visible("new")}, (new.refundable, new.skip_reason)))
      execute function runs.advance_run_version();`);
    this.addSql(`alter table "runs"."runs" drop column "flaky_tests";`);
    this.addSql(`
      alter table "runs"."test_results" drop column "retries", drop column "retries_used",
        drop column "failed_attempts", drop column "flaky", drop column "cause", drop column "earlier_attempts";`);
  }
}
