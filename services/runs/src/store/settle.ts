import type { EntityManager } from "@mikro-orm/postgresql";
import type { RunStatus, SkipReason } from "../db/entities.js";
import type { Dispatch } from "../dispatcher.js";
import { isFinal, type TestRow } from "../rows.js";

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
 * Recomputes a run's counts and status from its tests (the run row is locked by the caller). A
 * run is RUNNING until every test is final, then FAILED if any failed, else PASSED if any
 * passed, else SKIPPED; when it finishes, the credits of tests skipped without executing become
 * due for refund. A finished run never changes again.
 */
export async function settle(em: EntityManager, runId: string, reason?: SkipReason): Promise<Effects> {
  const [tally] = await em.execute<
    {
      passed: number;
      failed: number;
      skipped: number;
      open: number;
      refundable: number;
      no_executor: boolean;
    }[]
  >(
    `select count(*) filter (where status = 'passed')::int as passed,
            count(*) filter (where status = 'failed')::int as failed,
            count(*) filter (where status = 'skipped')::int as skipped,
            count(*) filter (where status in ('queued', 'running'))::int as open,
            count(*) filter (where refundable)::int as refundable,
            coalesce(bool_or(skip_reason = 'no_executor'), false) as no_executor
     from runs.test_results where run_id = ?`,
    [runId],
  );
  if (!tally) return {};
  let status: RunStatus = "running";
  if (tally.open === 0) status = tally.failed > 0 ? "failed" : tally.passed > 0 ? "passed" : "skipped";
  const final = isFinal(status);
  const skipReason: SkipReason | null =
    status === "skipped" ? (reason ?? (tally.no_executor ? "no_executor" : null)) : null;
  const refundDue = final ? tally.refundable : 0;
  const refundReason = refundDue > 0 ? refundReasons[reason ?? "no_executor"] : null;
  const [updated] = await em.execute<{ project_id: string }[]>(
    `update runs.runs set passed_tests = ?, failed_tests = ?, skipped_tests = ?, status = ?, skip_reason = ?,
       finished_at = case when ? then now() end, refund_due = ?, refund_reason = ?
     where id = ? and finished_at is null returning project_id`,
    [tally.passed, tally.failed, tally.skipped, status, skipReason, final, refundDue, refundReason, runId],
  );
  // `finished_at is null` above: only the write that finishes the run reports it.
  const finished: FinishedRun | undefined =
    final && updated
      ? {
          runId,
          projectId: updated.project_id,
          status,
          skipReason,
          passed: tally.passed,
          failed: tally.failed,
          skipped: tally.skipped,
        }
      : undefined;
  return {
    ...(refundDue > 0 && { refundRunId: runId }),
    ...(finished && { finished }),
  };
}

/** FAILED after its last allowed lapse, or left untaken (caller holds the run and test locks). */
export async function giveUp(
  em: EntityManager,
  test: TestRow,
  summary = gaveUpSummary(test.lapsed_leases + 1),
): Promise<Effects> {
  await em.execute(
    `update runs.test_results set status = 'failed', lapsed_leases = lapsed_leases + 1, summary = ?, finished_at = now()
     where id = ?`,
    [summary, test.id],
  );
  return settle(em, test.run_id);
}
