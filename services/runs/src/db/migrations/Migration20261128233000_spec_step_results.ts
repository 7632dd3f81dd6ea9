import { Migration } from "@mikro-orm/migrations";

// The body of runs.complete_running_test (Migration20261128190000_attempts) with the bound of its
// step results as given: a steps test's number of steps, or a spec test's 200 (its number of
// `test()`s is not known before it runs; CompleteTestRequest.step_results).
const completeRunningTest = (stepBound: string) => `
  create or replace function runs.complete_running_test(p_id text, p_token text, p_status text, p_summary text,
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
      and ${stepBound} >= p_min_steps
      and (p_status <> 'failed' or (p_cause <> 'browser' and t.retries_used >= t.retries))
    returning row_to_json(t) into v_test;
    if v_test is null then return null; end if;
    return json_build_object('run', row_to_json(v_run), 'test', v_test);
  end $$;`;

/** The step results of a Playwright spec test (issue 42): up to 200, as CompleteTest takes them. */
export class Migration20261128233000_spec_step_results extends Migration {
  override name = "Migration20261128233000_spec_step_results";

  override up(): void | Promise<void> {
    this.addSql(
      completeRunningTest(
        "(case when t.playwright is not null then 200 else jsonb_array_length(t.steps) end)",
      ),
    );
  }

  override down(): void | Promise<void> {
    this.addSql(completeRunningTest("jsonb_array_length(t.steps)"));
  }
}
