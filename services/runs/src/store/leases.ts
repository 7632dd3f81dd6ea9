import type { EntityManager } from "@mikro-orm/postgresql";
import { maxSpecStepResults, type Orm } from "@testrun/kit";
import {
  type FailureCause,
  type RunStatus,
  type StoredAttempt,
  type StoredStepResult,
  SYSTEM_CAUSES,
} from "../db/entities.js";
import { kindOfTest } from "../dispatcher.js";
import { isFinal, type RunRow, type TestRow, testArtifactsColumn, testColumns } from "../rows.js";
import { withEndedAttempt, withReleasedAttempt } from "./attempts.js";
import { type ClaimRequest, claimTests, heartbeatLeases, textArray } from "./claims.js";
import type {
  ClaimOutcome,
  CompleteOutcome,
  HeartbeatOutcome,
  ReleaseOutcome,
  SkipRunOutcome,
  Timing,
} from "./lease-outcomes.js";
import { lockRun, lockTest, reread, runWithTests, transaction } from "./locking.js";
import { type Effects, settle, settleRun } from "./settle.js";

export type {
  ClaimOutcome,
  CompleteOutcome,
  HeartbeatOutcome,
  ReleaseOutcome,
  SkipRunOutcome,
  Timing,
} from "./lease-outcomes.js";

const sameStepResults = (a: StoredStepResult[], b: StoredStepResult[]): boolean =>
  a.length === b.length &&
  a.every(
    (step, i) =>
      step.number === b[i]?.number && step.status === b[i]?.status && step.duration_ms === b[i]?.duration_ms,
  );

/** What an executor reports of a test's attempt (CompleteTestRequest, checked). */
export interface CompletionReport {
  status: RunStatus;
  summary: string;
  durationMs: number;
  failedStep: number;
  stepResults: StoredStepResult[];
  /** For FAILED: why (absent: ASSERTION); never the runs service's own causes. */
  cause?: FailureCause;
}

/** Whether a repeated report is the one that ended (and retried) `attempt`. */
const sameAttempt = (attempt: StoredAttempt, report: CompletionReport, cause: FailureCause | null) =>
  attempt.status === report.status &&
  attempt.summary === report.summary &&
  attempt.duration_ms === report.durationMs &&
  (attempt.failed_step ?? 0) === report.failedStep &&
  attempt.cause === cause &&
  sameStepResults(attempt.step_results, report.stepResults);

/** SET columns of the statement whose report ends the test, then its values (endingValues). */
const endingColumns = `status = ?, summary = ?, duration_ms = ?, failed_step = ?, step_results = ?::jsonb,
  finished_at = now(), lease_expires_at = null, cause = ?, flaky = (? = 'passed' and t.failed_attempts > 0)`;
const endingValues = (report: CompletionReport, cause: FailureCause | null) => [
  report.status,
  report.summary,
  report.durationMs,
  report.failedStep || null,
  JSON.stringify(report.stepResults),
  cause,
  report.status,
];

/**
 * The executors' calls: claim a test (take its lease), heartbeat, release, complete, and skip a
 * whole run whose environment does not answer. Each locks the run, then the test (locking.ts).
 */
export class LeaseStore {
  constructor(
    private readonly orm: Orm,
    private readonly timing: Timing,
  ) {}

  /** ClaimTest: one claim, decided exactly as one of ClaimTests' (claims.ts). */
  async claim(testResultId: string, executorId: string): Promise<ClaimOutcome> {
    const { outcomes } = await claimTests(this.orm, this.timing, [{ testResultId, executorId }]);
    return outcomes[0] ?? { kind: "not_found" };
  }

  /**
   * The Playwright specs (PlaywrightSpec proto JSON) of the given tests that run one, by test id:
   * read apart from the claim, so that no other read of a test carries up to 1 MiB of sources.
   */
  async specsOf(testResultIds: readonly string[]): Promise<Map<string, unknown>> {
    if (testResultIds.length === 0) return new Map();
    const rows = await this.orm.em
      .fork()
      .execute<{ id: string; playwright: unknown }[]>(
        "select id, playwright from runs.test_results where id = any(?::text[]) and playwright is not null",
        [textArray(testResultIds)],
      );
    return new Map(rows.map((row) => [row.id, row.playwright]));
  }

  /** ClaimTests: several claims at once (claims.ts). */
  claimMany(claims: readonly ClaimRequest[]): ReturnType<typeof claimTests> {
    return claimTests(this.orm, this.timing, claims);
  }

  /** HeartbeatLeases: every lease of an executor extended at once (claims.ts). */
  heartbeatMany(leases: readonly { testResultId: string; leaseToken: string }[]) {
    return heartbeatLeases(this.orm, this.timing.leaseMs, leases);
  }

  heartbeat(testResultId: string, leaseToken: string): Promise<HeartbeatOutcome> {
    return transaction<HeartbeatOutcome>(this.orm, async (em, refuse) => {
      const rows = await em.execute<TestRow[]>(
        `select ${testColumns} from runs.test_results t join runs.runs r on r.id = t.run_id
         where t.id = ? and r.charge_state = 'charged' for update of t`,
        [testResultId],
      );
      const test = rows[0] ?? refuse({ kind: "not_found" });
      if (isFinal(test.status)) return refuse({ kind: "final" });
      if (test.status !== "running" || test.lease_token !== leaseToken)
        return refuse({ kind: "not_current" });
      // Also after the lease lapsed, as long as nobody took the test over (the token still matches).
      const [updated] = await em.execute<{ lease_expires_at: string | Date }[]>(
        `update runs.test_results set lease_expires_at = now() + ? * interval '1 millisecond' where id = ?
         returning lease_expires_at`,
        [this.timing.leaseMs, test.id],
      );
      return { kind: "extended", leaseExpiresAt: new Date(updated?.lease_expires_at ?? Date.now()) };
    });
  }

  release(testResultId: string, leaseToken: string): Promise<ReleaseOutcome> {
    return transaction<ReleaseOutcome>(this.orm, async (em, refuse) => {
      const { run, test } = (await lockTest(em, testResultId)) ?? refuse({ kind: "not_found" });
      if (isFinal(test.status)) return refuse({ kind: "final" });
      if (test.lease_token !== leaseToken) return refuse({ kind: "not_current" });
      if (test.status === "queued") return { kind: "released", effects: {} }; // Already handed back by this claim.
      await em.execute(
        `update runs.test_results t set earlier_attempts = ${withReleasedAttempt},
           status = 'queued', lease_expires_at = null, started_at = null, queued_at = now()
         where t.id = ?`,
        [test.id],
      );
      return {
        kind: "released",
        effects: {
          publish: [
            { testResultId: test.id, runId: run.id, projectId: run.project_id, kind: kindOfTest(test) },
          ],
        },
      };
    });
  }

  async complete(
    testResultId: string,
    leaseToken: string,
    report: CompletionReport,
  ): Promise<CompleteOutcome> {
    const lastStep = report.stepResults.at(-1)?.number ?? 0;
    const cause = report.status === "failed" ? (report.cause ?? "assertion") : null;
    // The usual case in one round trip (Migration20261128190000_attempts): the test ends, it is not
    // the run's last open one, no artifact. Null: nothing written, the transaction below decides.
    const [fast] = await this.orm.em
      .fork()
      .execute<{ done: { run: RunRow; test: TestRow } | null }[]>(
        "select runs.complete_running_test(?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?) as done",
        [
          testResultId,
          leaseToken,
          report.status,
          report.summary,
          report.durationMs,
          report.failedStep || null,
          JSON.stringify(report.stepResults),
          Math.max(report.failedStep, lastStep),
          cause,
        ],
      );
    if (fast?.done)
      return { kind: "completed", ...fast.done, test: { ...fast.done.test, artifacts: [] }, effects: {} };
    return transaction<CompleteOutcome>(this.orm, async (em, refuse) => {
      // The report that ends the test, in one statement: the current claim's, within the test's
      // steps, not a failure to retry. The trigger moves the run's counters in it; settleRun
      // finishes the run if this was its last test.
      const run = await lockRun(em, "r.id = (select run_id from runs.test_results where id = ?)", [
        testResultId,
      ]);
      if (!run) return refuse({ kind: "not_found" });
      const [finished] = await em.execute<TestRow[]>(
        `update runs.test_results t set ${endingColumns}
         where t.id = ? and t.run_id = ? and t.status = 'running' and t.lease_token = ?
           and (case when t.playwright is not null then ${maxSpecStepResults} else jsonb_array_length(t.steps) end) >= ? and (? <> 'failed' or (? <> 'browser' and t.retries_used >= t.retries))
         returning ${testColumns}, ${testArtifactsColumn}`,
        [
          ...endingValues(report, cause),
          testResultId,
          run.id,
          leaseToken,
          Math.max(report.failedStep, lastStep),
          report.status,
          cause,
        ],
      );
      if (finished) {
        // The run's row is locked since lockRun: only this statement moved its counters, by one.
        const open = run.total_tests - run.passed_tests - run.failed_tests - run.skipped_tests;
        if (open > 1) return { kind: "completed", run, test: finished, effects: {} };
        const settled = await settleRun(em, run.id);
        return { kind: "completed", run: settled.run ?? run, test: finished, effects: settled.effects };
      }
      // Otherwise nothing was written: find out why, under the test's lock.
      const { test } = (await lockTest(em, testResultId)) ?? refuse({ kind: "not_found" });
      // Only here is the number of steps known (the caller checked the rest of the report, the
      // step results in order, so the last has the highest number).
      // A spec test's steps are its `test()`s, up to CompleteTest's bound (maxSpecStepResults).
      const steps = test.has_spec ? maxSpecStepResults : test.steps.length;
      if (report.failedStep > steps) return refuse({ kind: "no_such_step", steps });
      if (lastStep > steps) return refuse({ kind: "no_such_step_result", steps });
      const retriedBefore = test.earlier_attempts.find((attempt) => attempt.lease_token === leaseToken);
      if (retriedBefore) {
        // This claim's report ended an attempt that was retried: a repeat answers as the first did.
        if (!sameAttempt(retriedBefore, report, cause)) return refuse({ kind: "final" });
        return { kind: "completed", ...(await reread(em, test.run_id, test.id)), effects: {}, retried: true };
      }
      if (isFinal(test.status)) {
        const repeated =
          test.lease_token === leaseToken &&
          test.status === report.status &&
          (test.summary ?? "") === report.summary &&
          test.duration_ms === report.durationMs &&
          (test.failed_step ?? 0) === report.failedStep &&
          sameStepResults(test.step_results, report.stepResults);
        if (!repeated) return refuse({ kind: "final" });
        return { kind: "completed", ...(await reread(em, test.run_id, test.id)), effects: {} };
      }
      if (test.status !== "running" || test.lease_token !== leaseToken)
        return refuse({ kind: "not_current" });
      if (cause && (SYSTEM_CAUSES.has(cause) || test.retries_used < test.retries)) {
        const retried = await this.retry(em, run, test, report, cause);
        if (retried) return retried;
      }
      // The test ends (the system's cause for the last allowed time, or a run settled meanwhile).
      const systemsLast = cause !== null && SYSTEM_CAUSES.has(cause);
      await em.execute(
        `update runs.test_results t set ${endingColumns},
           lapsed_leases = t.lapsed_leases + ?::int, refundable = t.refundable or (? and t.failed_attempts = 0)
         where t.id = ?`,
        [...endingValues(report, cause), systemsLast ? 1 : 0, systemsLast, test.id],
      );
      const effects = await settle(em, test.run_id);
      return { kind: "completed", ...(await reread(em, test.run_id, test.id)), effects };
    });
  }

  /**
   * A FAILED attempt that does not end its test: appended to its earlier attempts, the test QUEUED
   * again and published. One with the system's cause (BROWSER) counts against MAX_ATTEMPTS like a
   * lapsed lease, not against the test's retries; undefined when that was the last allowed one.
   */
  private async retry(
    em: EntityManager,
    run: RunRow,
    test: TestRow,
    report: CompletionReport,
    cause: FailureCause,
  ): Promise<CompleteOutcome | undefined> {
    const systems = SYSTEM_CAUSES.has(cause);
    if (systems && test.lapsed_leases + 1 >= this.timing.maxAttempts) return undefined;
    await em.execute(
      `update runs.test_results t set earlier_attempts = ${withEndedAttempt({
        status: "'failed'",
        durationMs: "?::bigint",
        summary: "?::text",
        failedStep: "?::int",
        stepResults: "?::jsonb",
        cause: "?::text",
      })},
         status = 'queued', summary = null, duration_ms = null, failed_step = null, step_results = '[]',
         started_at = null, lease_expires_at = null, queued_at = now(),
         retries_used = t.retries_used + ?::int, failed_attempts = t.failed_attempts + ?::int,
         lapsed_leases = t.lapsed_leases + ?::int
       where t.id = ?`,
      [
        report.durationMs,
        report.summary,
        report.failedStep || null,
        JSON.stringify(report.stepResults),
        cause,
        systems ? 0 : 1,
        systems ? 0 : 1,
        systems ? 1 : 0,
        test.id,
      ],
    );
    const publish = [
      { testResultId: test.id, runId: run.id, projectId: run.project_id, kind: kindOfTest(test) },
    ];
    return {
      kind: "completed",
      ...(await reread(em, test.run_id, test.id)),
      effects: { publish },
      retried: true,
    };
  }

  /** The environment did not answer: every open test SKIPPED, the run SKIPPED, all its credits due back. */
  skipRun(runId: string, testResultId: string, leaseToken: string, summary: string): Promise<SkipRunOutcome> {
    return transaction<SkipRunOutcome>(this.orm, async (em, refuse) => {
      const run = (await lockRun(em, "r.id = ?", [runId])) ?? refuse({ kind: "run_not_found" });
      const done = async (effects: Effects): Promise<SkipRunOutcome> => ({
        kind: "skipped",
        result: await runWithTests(em, runId),
        effects,
      });
      if (run.status === "skipped" && run.skip_reason === "environment_unreachable") return done({});
      // Finished meanwhile (cancelled, say): the claim was settled with it, so it is no longer the
      // executor's to work on, unlike a run whose tests ran (tests_ran).
      if (isFinal(run.status)) return refuse({ kind: "run_finished" });
      const tests = await em.execute<TestRow[]>(
        `select ${testColumns} from runs.test_results t where t.run_id = ? order by t.position for update`,
        [runId],
      );
      const claimed = tests.find((t) => t.id === testResultId) ?? refuse({ kind: "test_not_found" });
      if (tests.some((t) => t.status === "passed" || t.status === "failed"))
        return refuse({ kind: "tests_ran" });
      if (claimed.status !== "running" || claimed.lease_token !== leaseToken)
        return refuse({ kind: "not_current" });
      await em.execute(
        `update runs.test_results set refundable = true,
           status = case when status in ('queued', 'running') then 'skipped' else status end,
           summary = case when status in ('queued', 'running') then ? else summary end,
           skip_reason = case when status in ('queued', 'running') then 'environment_unreachable' else skip_reason end,
           finished_at = coalesce(finished_at, now()), lease_expires_at = null
         where run_id = ?`,
        [summary, runId],
      );
      return done(await settle(em, runId, "environment_unreachable"));
    });
  }
}
