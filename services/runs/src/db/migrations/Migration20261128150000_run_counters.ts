import { Migration } from "@mikro-orm/migrations";

const visible = (row: "old" | "new") =>
  `(${row}.status, ${row}.summary, ${row}.duration_ms, ${row}.failed_step, ${row}.attempt, ${row}.started_at, ${row}.finished_at)`;
const counted = (row: "old" | "new") => `(${row}.refundable, ${row}.skip_reason)`;

/**
 * A run's counters kept by the statement that changes one of its tests (issue 38): passed, failed
 * and skipped tests (the columns existed, written by a recount of all of the run's tests on every
 * completion) and the two new ones a run's end needs, the refundable tests and those skipped for
 * want of an executor. A completion then costs the same in a run of 500 tests as in one of 2: the
 * run finishes when its counters say no test is open (store/settle.ts), with no count over its tests.
 *
 * The version trigger of Migration20261125000000_run_version already updates the run's row in that
 * statement; it now moves the counters too (one update of the run's row, as before), and fires
 * also when only `refundable` or `skip_reason` change. The counters of existing runs are recounted.
 */
export class Migration20261128150000_run_counters extends Migration {
  override name = "Migration20261128150000_run_counters";

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "runs"."runs" add "refundable_tests" int not null default 0, add "no_executor_tests" int not null default 0;`,
    );
    this.addSql(`
      update runs.runs r set passed_tests = c.passed, failed_tests = c.failed, skipped_tests = c.skipped,
        refundable_tests = c.refundable, no_executor_tests = c.no_executor
      from (
        select run_id,
          count(*) filter (where status = 'passed')::int as passed,
          count(*) filter (where status = 'failed')::int as failed,
          count(*) filter (where status = 'skipped')::int as skipped,
          count(*) filter (where refundable)::int as refundable,
          count(*) filter (where skip_reason = 'no_executor')::int as no_executor
        from runs.test_results group by run_id
      ) c
      where c.run_id = r.id;`);
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
            - (old.skip_reason is not distinct from 'no_executor')::int
        where id = new.run_id returning version into next_version;
        if changed then new.version := next_version; end if;
        return new;
      end $$;`);
    this.addSql(`drop trigger test_results_advance_run_version on runs.test_results;`);
    this.addSql(`
      create trigger test_results_advance_run_version before update on runs.test_results for each row
      when ((${visible("old")}, ${counted("old")}) is distinct from (${visible("new")}, ${counted("new")}))
      execute function runs.advance_run_version();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger test_results_advance_run_version on runs.test_results;`);
    this.addSql(`
      create or replace function runs.advance_run_version() returns trigger language plpgsql as $$
      begin
        update runs.runs set version = version + 1 where id = new.run_id returning version into new.version;
        return new;
      end $$;`);
    this.addSql(`
      create trigger test_results_advance_run_version before update on runs.test_results for each row
      when (${visible("old")} is distinct from ${visible("new")})
      execute function runs.advance_run_version();`);
    this.addSql(`alter table "runs"."runs" drop column "refundable_tests", drop column "no_executor_tests";`);
  }
}
