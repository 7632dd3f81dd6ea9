import type { EntityManager } from "@mikro-orm/postgresql";
import type { RunStatus, SkipReason } from "../db/entities.js";
import type { Dispatch } from "../dispatcher.js";
import { baseRunSelect } from "../failures/base.js";
import { type RunRow, runColumns, type TestRow } from "../rows.js";

/** What a write left to do once committed: a refund to settle, tests to publish. */
export interface Effects {
  refundRunId?: string;
  /** The run this write finished, if it did: counted and logged once committed (finished.ts). */
  finished?: FinishedRun;
  publish?: Dispatch[];
}

/** A run as it finished: its status and tally, for the one line its end leaves in the log. */
export interface FinishedRun {
  runId: string;
  projectId: string;
  status: RunStatus;
  skipReason: SkipReason | null;
  passed: number;
  failed: number;
  skipped: number;
}

/** The summary of a test whose executors stopped responding `times` times. */
export const gaveUpSummary = (times: number) =>
  `the executor stopped responding ${times} time${times === 1 ? "" : "s"} (lease lapsed); giving up`;

const refundReasons: Record<SkipReason, string> = {
  environment_unreachable: "environment unreachable",
  cancelled: "cancelled",
  no_executor: "no executor",
};

/**
 * Finishes a run whose tests are all final (the run row is locked by the caller). A run is RUNNING
 * until every test is final, then FAILED if any failed, else PASSED if any passed, else SKIPPED;
 * when it finishes, the credits of tests skipped without executing become due for refund. A
 * finished run never changes again.
 *
 * O(1) in the run's size: the counts are the run's own counters, which the statement that changed
 * a test already moved (the trigger of Migration20261128150000_run_counters), so this reads one
 * row and writes it only when the run ends. Answers the run as it now is.
 */
export async function settleRun(
  em: EntityManager,
  runId: string,
  reason?: SkipReason,
): Promise<{ run: RunRow | undefined; effects: Effects }> {
  const [run] = await em.execute<(RunRow & { refundable_tests: number; no_executor_tests: number })[]>(
    `select ${runColumns}, r.refundable_tests, r.no_executor_tests from runs.runs r where r.id = ?`,
    [runId],
  );
  if (!run || run.finished_at !== null) return { run, effects: {} };
  const open = run.total_tests - run.passed_tests - run.failed_tests - run.skipped_tests;
  if (open > 0) return { run, effects: {} };
  // Quarantined failures are counted as failures but do not fail the run (docs/rest-api.md,
  // "Test health and quarantine"): a run whose only failures are quarantined PASSED.
  const status: RunStatus =
    run.failed_tests > run.quarantined_failures
      ? "failed"
      : run.passed_tests > 0 || run.quarantined_failures > 0
        ? "passed"
        : "skipped";
  const skipReason: SkipReason | null =
    status === "skipped" ? (reason ?? (run.no_executor_tests > 0 ? "no_executor" : null)) : null;
  const refundDue = run.refundable_tests;
  const refundReason = refundDue > 0 ? refundReasons[reason ?? "no_executor"] : null;
  // `finished_at is null`: only the write that finishes the run reports it. It also records the
  // run's base (CompareRuns' default: the latest finished run created before it on the same
  // environment with the same plan, or for a run of no plan the same name) and how many of its
  // failures are new against it: once per run, indexed by environment and creation. Marked tests
  // take the run's next version, so that a watcher that read them before (WatchRun reads the tests
  // changed since its version) sees them marked too.
  const [updated] = await em.execute<RunRow[]>(
    `with base as (${baseRunSelect}),
     marked as (
       update runs.test_results t set new_failure = true,
         version = (select version + 1 from runs.runs where id = t.run_id)
       where t.run_id = ? and t.status = 'failed' and exists (select 1 from base)
         and not exists (select 1 from runs.test_results bt
                         where bt.run_id = (select id from base) and bt.test_case_id = t.test_case_id and bt.status = 'failed')
       returning t.id)
     update runs.runs r set status = ?, skip_reason = ?, finished_at = now(), refund_due = ?, refund_reason = ?,
       version = r.version + (exists (select 1 from marked))::int,
       base_run_id = (select id from base),
       new_failures = case when exists (select 1 from base) then (select count(*)::int from marked) end
     where r.id = ? and r.finished_at is null returning ${runColumns}`,
    [runId, runId, status, skipReason, refundDue, refundReason, runId],
  );
  if (!updated) return { run, effects: {} };
  const finished: FinishedRun = {
    runId,
    projectId: updated.project_id,
    status,
    skipReason,
    passed: updated.passed_tests,
    failed: updated.failed_tests,
    skipped: updated.skipped_tests,
  };
  return { run: updated, effects: { ...(refundDue > 0 && { refundRunId: runId }), finished } };
}

/** settleRun's effects alone. */
export async function settle(em: EntityManager, runId: string, reason?: SkipReason): Promise<Effects> {
  return (await settleRun(em, runId, reason)).effects;
}

/**
 * FAILED after its last allowed lapse, or left untaken (caller holds the run and test locks): the
 * system's cause EXECUTOR_LOST; the credit goes back when no attempt of the test's own ran.
 */
export async function giveUp(
  em: EntityManager,
  test: TestRow,
  summary = gaveUpSummary(test.lapsed_leases + 1),
): Promise<Effects> {
  await em.execute(
    `update runs.test_results set status = 'failed', lapsed_leases = lapsed_leases + 1, summary = ?, finished_at = now(),
       cause = 'executor_lost'
     where id = ?`,
    [summary, test.id],
  );
  return settle(em, test.run_id);
}
