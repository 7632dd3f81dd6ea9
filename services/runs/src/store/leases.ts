import { randomBytes } from "node:crypto";
import type { Orm } from "@testrun/kit";
import type { RunStatus, StoredStepResult } from "../db/entities.js";
import { testKindOf } from "../dispatcher.js";
import { overShare } from "../fair-share.js";
import { isFinal, type RunRow, type TestRow, testArtifactsColumn, testColumns } from "../rows.js";
import { dropEarlierAttempts } from "./artifacts.js";
import { type ClaimRequest, claimTests, heartbeatLeases } from "./claims.js";
import type {
  ClaimOutcome,
  CompleteOutcome,
  HeartbeatOutcome,
  ReleaseOutcome,
  SkipRunOutcome,
  Timing,
} from "./lease-outcomes.js";
import { lockRun, lockTest, reread, runWithTests, transaction } from "./locking.js";
import { type Effects, giveUp, settle, settleRun } from "./settle.js";

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

/**
 * The executors' calls: claim a test (take its lease), heartbeat, release, complete, and skip a
 * whole run whose environment does not answer. Each locks the run, then the test (locking.ts).
 */
export class LeaseStore {
  constructor(
    private readonly orm: Orm,
    private readonly timing: Timing,
  ) {}

  claim(testResultId: string, executorId: string): Promise<ClaimOutcome> {
    return transaction<ClaimOutcome>(this.orm, async (em, refuse) => {
      const { run, test } = (await lockTest(em, testResultId)) ?? refuse({ kind: "not_found" });
      if (isFinal(test.status)) return refuse({ kind: "final" });
      if (test.status === "running") {
        const [lease] = await em.execute<{ lapsed: boolean }[]>(
          "select lease_expires_at < now() as lapsed from runs.test_results where id = ?",
          [test.id],
        );
        if (!lease?.lapsed) return refuse({ kind: "lease_held" });
        // Taking over a lapsed lease counts that lapse; the last allowed one fails the test.
        if (test.lapsed_leases + 1 >= this.timing.maxAttempts) {
          return { kind: "gave_up", runId: test.run_id, effects: await giveUp(em, test) };
        }
      }
      // A new claim (not taking a lapsed lease over, which replaces a slot the project held).
      if (
        test.status === "queued" &&
        (await overShare(em, run.project_id, this.timing.maxRunningPerProject ?? 0))
      ) {
        // The executor drops this message, so the reconciler publishes the test again
        // REPUBLISH_AFTER_MS from now, without back-off: the test is deferred, not ignored. (A start
        // marks its tests published before it publishes them; only when its confirmation failed does
        // the dispatcher's mark land after this, making the count 1: still one interval.) The dispatch deadline cannot skip it meanwhile: it applies only while no
        // executor is at work, and a project over its share holds live leases.
        await em.execute(
          "update runs.test_results set published_at = now(), publish_count = 0 where id = ?",
          [test.id],
        );
        return { kind: "over_share" };
      }
      const lapsed = test.status === "running" ? 1 : 0;
      const rows = await em.execute<TestRow[]>(
        `update runs.test_results t set status = 'running', attempt = attempt + 1, lapsed_leases = lapsed_leases + ?,
           lease_owner = ?, lease_token = ?, lease_expires_at = now() + ? * interval '1 millisecond', started_at = now()
         where t.id = ? returning ${testColumns}`,
        [lapsed, executorId, randomBytes(18).toString("base64url"), this.timing.leaseMs, test.id],
      );
      // The new attempt's result will show only its own artifacts.
      if (test.attempt > 0) await dropEarlierAttempts(em, test.id);
      return { kind: "claimed", run, test: rows[0] as TestRow, tookOverLapsed: lapsed === 1 };
    });
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
        `update runs.test_results set status = 'queued', lease_expires_at = null, started_at = null, queued_at = now()
         where id = ?`,
        [test.id],
      );
      return {
        kind: "released",
        effects: {
          publish: [
            { testResultId: test.id, runId: run.id, projectId: run.project_id, kind: testKindOf(test.steps) },
          ],
        },
      };
    });
  }

  async complete(
    testResultId: string,
    leaseToken: string,
    report: {
      status: RunStatus;
      summary: string;
      durationMs: number;
      failedStep: number;
      stepResults: StoredStepResult[];
    },
  ): Promise<CompleteOutcome> {
    const lastStep = report.stepResults.at(-1)?.number ?? 0;
    // The usual case in one round trip (Migration20261128160000_lease_functions): not the run's
    // last open test, no artifact. Null: nothing written, the transaction below decides.
    const [fast] = await this.orm.em
      .fork()
      .execute<{ done: { run: RunRow; test: TestRow } | null }[]>(
        "select runs.complete_running_test(?, ?, ?, ?, ?, ?, ?::jsonb, ?) as done",
        [
          testResultId,
          leaseToken,
          report.status,
          report.summary,
          report.durationMs,
          report.failedStep || null,
          JSON.stringify(report.stepResults),
          Math.max(report.failedStep, lastStep),
        ],
      );
    if (fast?.done)
      return { kind: "completed", ...fast.done, test: { ...fast.done.test, artifacts: [] }, effects: {} };
    return transaction<CompleteOutcome>(this.orm, async (em, refuse) => {
      // The usual case in one statement: the current claim's report, within the test's steps. The
      // trigger moves the run's counters in it; settleRun finishes the run if this was its last test.
      const run = await lockRun(em, "r.id = (select run_id from runs.test_results where id = ?)", [
        testResultId,
      ]);
      if (!run) return refuse({ kind: "not_found" });
      const [finished] = await em.execute<TestRow[]>(
        `update runs.test_results t set status = ?, summary = ?, duration_ms = ?, failed_step = ?, step_results = ?::jsonb,
           finished_at = now(), lease_expires_at = null
         where t.id = ? and t.run_id = ? and t.status = 'running' and t.lease_token = ?
           and jsonb_array_length(t.steps) >= ?
         returning ${testColumns}, ${testArtifactsColumn}`,
        [
          report.status,
          report.summary,
          report.durationMs,
          report.failedStep || null,
          JSON.stringify(report.stepResults),
          testResultId,
          run.id,
          leaseToken,
          Math.max(report.failedStep, lastStep),
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
      if (report.failedStep > test.steps.length)
        return refuse({ kind: "no_such_step", steps: test.steps.length });
      if (lastStep > test.steps.length)
        return refuse({ kind: "no_such_step_result", steps: test.steps.length });
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
      await em.execute(
        `update runs.test_results set status = ?, summary = ?, duration_ms = ?, failed_step = ?, step_results = ?::jsonb,
           finished_at = now(), lease_expires_at = null
         where id = ?`,
        [
          report.status,
          report.summary,
          report.durationMs,
          report.failedStep || null,
          JSON.stringify(report.stepResults),
          test.id,
        ],
      );
      const effects = await settle(em, test.run_id);
      return { kind: "completed", ...(await reread(em, test.run_id, test.id)), effects };
    });
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
