import { Migration } from "@mikro-orm/migrations";

/**
 * A run's version, advanced by every visible change of one of its tests, and each test's version
 * as of its last such change: WatchRun then reads only the tests changed after the version it sent
 * (services/runs/src/watch.ts), instead of the whole run on every change.
 *
 * A trigger, so that no change statement can forget it and the version moves in the very statement
 * that changes the test (atomic with it). Every writer locks the run's row before its tests
 * (store/locking.ts), so the trigger's update of that row never waits and versions follow commit
 * order. A run's own visible fields (status, counts, finished_at) change only together with its
 * tests (store/settle.ts), so the tests' trigger covers them too. Lease heartbeats and publication
 * marks change nothing a reader sees, and leave the version alone.
 */
export class Migration20261125000000_run_version extends Migration {
  override name = "Migration20261125000000_run_version";

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs"."runs" add "version" bigint not null default 0;`);
    this.addSql(`alter table "runs"."test_results" add "version" bigint not null default 0;`);
    this.addSql(`
      create function runs.advance_run_version() returns trigger language plpgsql as $$
      begin
        update runs.runs set version = version + 1 where id = new.run_id returning version into new.version;
        return new;
      end $$;`);
    this.addSql(`
      create trigger test_results_advance_run_version before update on runs.test_results for each row
      when ((old.status, old.summary, old.duration_ms, old.failed_step, old.attempt, old.started_at, old.finished_at)
        is distinct from (new.status, new.summary, new.duration_ms, new.failed_step, new.attempt, new.started_at, new.finished_at))
      execute function runs.advance_run_version();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger test_results_advance_run_version on runs.test_results;`);
    this.addSql(`drop function runs.advance_run_version();`);
    this.addSql(`alter table "runs"."test_results" drop column "version";`);
    this.addSql(`alter table "runs"."runs" drop column "version";`);
  }
}
