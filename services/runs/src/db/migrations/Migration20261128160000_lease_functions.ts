import { Migration } from "@mikro-orm/migrations";

/**
 * The usual claim and the usual completion, each one statement (issue 38): a function call is its
 * own transaction, so the run's lock, the fair-share count and the test's update cost one round
 * trip instead of a transaction of several (BEGIN, each statement, COMMIT). They do only the usual
 * case and answer null, having written nothing, for anything else, which the service then does in
 * its own transaction as before (services/runs/src/store/claims.ts and leases.ts: the rules live
 * there; these functions are their fast paths, kept to what those rules decide without a doubt).
 *
 * Inside a PL/pgSQL function each statement takes a fresh snapshot (READ COMMITTED), so the count
 * after the project's advisory lock sees every claim committed before the lock was granted, as
 * the service's own statements do (fair-share.ts).
 */
export class Migration20261128160000_lease_functions extends Migration {
  override name = "Migration20261128160000_lease_functions";

  override up(): void | Promise<void> {
    // ClaimTests' usual case: tests never claimed (attempt 0, so no earlier attempt's artifacts to
    // drop) of the first one's run, all within the project's share (or no share configured).
    // Answers {run, tests} (the tests claimed; those of other runs, or not QUEUED, are not), or null
    // when the run is unknown or not charged, or the claims would take the project past its share.
    this.addSql(`
      create function runs.claim_new_tests(p_ids text[], p_owners text[], p_tokens text[], p_lease_ms int, p_max_running int)
      returns json language plpgsql as $$
      declare
        v_run runs.runs;
        v_held int;
        v_tests json;
      begin
        select r.* into v_run from runs.runs r
        where r.id = (select run_id from runs.test_results where id = p_ids[1]) and r.charge_state = 'charged'
        for update;
        if not found then return null; end if;
        if p_max_running > 0 then
          perform pg_advisory_xact_lock(hashtext('runs.fair-share:' || v_run.project_id));
          select count(*) into v_held from runs.test_results t join runs.runs r on r.id = t.run_id
          where r.project_id = v_run.project_id and t.status = 'running' and t.lease_expires_at > now();
          if v_held + cardinality(p_ids) > p_max_running then return null; end if;
        end if;
        with claimed as (
          update runs.test_results t set status = 'running', attempt = t.attempt + 1, lease_owner = c.owner,
            lease_token = c.token, lease_expires_at = now() + p_lease_ms * interval '1 millisecond', started_at = now()
          from unnest(p_ids, p_owners, p_tokens) as c(id, owner, token)
          where t.id = c.id and t.run_id = v_run.id and t.status = 'queued' and t.attempt = 0
          returning t.*
        )
        select coalesce(json_agg(claimed), '[]'::json) into v_tests from claimed;
        return json_build_object('run', row_to_json(v_run), 'tests', v_tests);
      end $$;`);
    // CompleteTest's usual case: the current claim's report, within the test's steps, of a test
    // that is not its run's last open one (the run goes on) and has no artifact (its answer's
    // artifacts are then none). Answers {run, test}, or null having written nothing.
    this.addSql(`
      create function runs.complete_running_test(p_id text, p_token text, p_status text, p_summary text,
        p_duration_ms int, p_failed_step int, p_step_results jsonb, p_min_steps int)
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
          failed_step = p_failed_step, step_results = p_step_results, finished_at = now(), lease_expires_at = null
        where t.id = p_id and t.run_id = v_run.id and t.status = 'running' and t.lease_token = p_token
          and jsonb_array_length(t.steps) >= p_min_steps
        returning row_to_json(t) into v_test;
        if v_test is null then return null; end if;
        return json_build_object('run', row_to_json(v_run), 'test', v_test);
      end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql("drop function runs.complete_running_test(text, text, text, text, int, int, jsonb, int);");
    this.addSql("drop function runs.claim_new_tests(text[], text[], text[], int, int);");
  }
}
