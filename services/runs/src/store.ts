import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Orm } from "@testrun/kit";
import type { RunStatus, SkipReason, TestStepSnapshot } from "./db/entities.js";
import { overShare } from "./fair-share.js";
import { isFinal, type RunRow, runColumns, type TestRow, testColumns } from "./rows.js";

/** Timing rules of leases and dispatch, from configuration. */
export interface Timing {
  leaseMs: number;
  maxAttempts: number;
  /** MAX_RUNNING_PER_PROJECT: a project's share of the executors' slots (0: no limit). */
  maxRunningPerProject?: number;
}

export interface NewRun {
  id: string;
  projectId: string;
  environmentId: string;
  environmentBaseUrl: string;
  testPlanId: string | null;
  name: string;
  startedByKeyId: string | null;
  startedByMemberId: string | null;
  tests: { id: string; testCaseId: string; name: string; steps: TestStepSnapshot[] }[];
}

/** A run with its tests, as read in one transaction. */
export interface RunWithTests {
  run: RunRow;
  tests: TestRow[];
}

/** What a write left to do once committed: a refund to settle, tests to publish. */
export interface Effects {
  refundRunId?: string;
  publish?: { testResultId: string; runId: string; projectId: string }[];
}

export type ClaimOutcome =
  | { kind: "claimed"; run: RunRow; test: TestRow }
  /** The lease lapsed for the last allowed time: the test is now FAILED (committed). */
  | { kind: "gave_up"; runId: string; effects: Effects }
  /** The project holds its share of the slots while others wait: the test stays QUEUED. */
  | { kind: "over_share" };

const fail = (code: Code, message: string): never => {
  throw new ConnectError(message, code);
};

/** The summary of a test whose executors stopped responding `times` times. */
export const gaveUpSummary = (times: number) =>
  `the executor stopped responding ${times} time${times === 1 ? "" : "s"} (lease lapsed); giving up`;
/** A lapsed test that nobody took over while no executor was at work, for a whole dispatch deadline. */
const untakenSummary =
  "the executor stopped responding (lease lapsed) and no executor took the test over before the dispatch deadline";

const refundReasons: Record<SkipReason, string> = {
  environment_unreachable: "environment unreachable",
  cancelled: "cancelled",
  no_executor: "no executor",
};

/**
 * The runs schema. Every change to a test happens in a transaction that first locks its run's row
 * (`for update`), then the test's: concurrent completions of one run are serialised, the run's
 * status and counts are recomputed from its tests in the same transaction (`settle`), and the
 * lock order (run, then test) never deadlocks. Times come from the database clock, so replicas
 * agree on when a lease lapsed.
 */
export class RunStore {
  constructor(
    private readonly orm: Orm,
    private readonly timing: Timing,
  ) {}

  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional(work);
  }

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  // --- start ------------------------------------------------------------------------------------

  /** Stores a run RUNNING with every test QUEUED, hidden (`pending`) until its charge is confirmed. */
  insertPending(run: NewRun): Promise<void> {
    return this.transaction(async (em) => {
      await em.execute(
        `insert into runs.runs (id, project_id, environment_id, environment_base_url, test_plan_id, name, status,
           total_tests, credits_charged, charge_state, started_at, created_at, started_by_key_id, started_by_member_id)
         values (?, ?, ?, ?, ?, ?, 'running', ?, ?, 'pending', now(), now(), ?, ?)`,
        [
          run.id,
          run.projectId,
          run.environmentId,
          run.environmentBaseUrl,
          run.testPlanId,
          run.name,
          run.tests.length,
          run.tests.length,
          run.startedByKeyId,
          run.startedByMemberId,
        ],
      );
      // One statement for all tests (at most 500), passed as one JSON array: the driver would
      // expand a JS array into a parameter list.
      await em.execute(
        `insert into runs.test_results (id, run_id, test_case_id, name, position, status, steps, queued_at)
         select u.id, ?, u.test_case_id, u.name, u.position, 'queued', u.steps, now()
         from jsonb_to_recordset(?::jsonb) as u(id text, test_case_id text, name text, steps jsonb, position int)`,
        [
          run.id,
          JSON.stringify(
            run.tests.map((t, position) => ({
              id: t.id,
              test_case_id: t.testCaseId,
              name: t.name,
              steps: t.steps,
              position,
            })),
          ),
        ],
      );
    });
  }

  /** Makes a pending run visible once billing took its credits; false when it was abandoned meanwhile. */
  async markCharged(runId: string): Promise<boolean> {
    const rows = await this.em().execute<{ id: string }[]>(
      "update runs.runs set charge_state = 'charged' where id = ? and charge_state = 'pending' returning id",
      [runId],
    );
    return rows.length === 1;
  }

  /**
   * Gives up a start that did not complete: pending becomes abandoned (so a late charge confirmation
   * cannot make it visible). Answers what the run is now: abandoned (its charge, if any, is to be
   * refunded), charged (it did start after all), or gone.
   */
  async abandon(runId: string): Promise<"abandoned" | "charged" | "gone"> {
    const rows = await this.em().execute<{ charge_state: string }[]>(
      `with changed as (update runs.runs set charge_state = 'abandoned' where id = ? and charge_state = 'pending' returning charge_state)
       select charge_state from changed union all select charge_state from runs.runs where id = ? and charge_state <> 'pending'`,
      [runId, runId],
    );
    const state = rows[0]?.charge_state;
    return state === "charged" ? "charged" : state === "abandoned" ? "abandoned" : "gone";
  }

  /** Removes a run that never started (and was never, or no longer, charged). */
  async deleteUnstarted(runId: string): Promise<void> {
    await this.em().execute("delete from runs.runs where id = ? and charge_state <> 'charged'", [runId]);
  }

  // --- reads ------------------------------------------------------------------------------------

  /**
   * A run and its tests in one statement: one round trip and one snapshot, so the counts agree with
   * the tests without a transaction. The tests come back as a JSON array (timestamps in ISO form,
   * which dbDate reads like the text form).
   */
  async getRun(projectId: string, runId: string): Promise<RunWithTests | undefined> {
    const rows = await this.em().execute<(RunRow & { tests: TestRow[] })[]>(
      `select ${runColumns},
         coalesce((select json_agg(t order by t.position) from (select ${testColumns} from runs.test_results t where t.run_id = r.id) t), '[]') as tests
       from runs.runs r where r.id = ? and r.project_id = ? and r.charge_state = 'charged'`,
      [runId, projectId],
    );
    const found = rows[0];
    if (!found) return undefined;
    const { tests, ...run } = found;
    return { run, tests };
  }

  private testsOf(em: EntityManager, runId: string): Promise<TestRow[]> {
    return em.execute<TestRow[]>(
      `select ${testColumns} from runs.test_results t where t.run_id = ? order by t.position`,
      [runId],
    );
  }

  // --- locking helpers ----------------------------------------------------------------------------

  private async lockRun(em: EntityManager, where: string, params: unknown[]): Promise<RunRow | undefined> {
    const rows = await em.execute<RunRow[]>(
      `select ${runColumns} from runs.runs r where ${where} and r.charge_state = 'charged' for update`,
      params,
    );
    return rows[0];
  }

  /** Locks a test's run, then the test; NOT_FOUND when either is unknown or not started. */
  private async lockTest(em: EntityManager, testResultId: string): Promise<{ run: RunRow; test: TestRow }> {
    const run = await this.lockRun(em, "r.id = (select run_id from runs.test_results where id = ?)", [
      testResultId,
    ]);
    if (!run) return fail(Code.NotFound, "no such test result");
    const tests = await em.execute<TestRow[]>(
      `select ${testColumns} from runs.test_results t where t.id = ? for update`,
      [testResultId],
    );
    return { run, test: tests[0] ?? fail(Code.NotFound, "no such test result") };
  }

  /**
   * Recomputes a run's counts and status from its tests (the run row is locked by the caller). A
   * run is RUNNING until every test is final, then FAILED if any failed, else PASSED if any
   * passed, else SKIPPED; when it finishes, the credits of tests skipped without executing become
   * due for refund. A finished run never changes again.
   */
  private async settle(em: EntityManager, runId: string, reason?: SkipReason): Promise<Effects> {
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
    await em.execute(
      `update runs.runs set passed_tests = ?, failed_tests = ?, skipped_tests = ?, status = ?, skip_reason = ?,
         finished_at = case when ? then now() end, refund_due = ?, refund_reason = ?
       where id = ? and finished_at is null`,
      [tally.passed, tally.failed, tally.skipped, status, skipReason, final, refundDue, refundReason, runId],
    );
    return refundDue > 0 ? { refundRunId: runId } : {};
  }

  // --- executor calls ---------------------------------------------------------------------------

  claim(testResultId: string, executorId: string): Promise<ClaimOutcome> {
    return this.transaction(async (em) => {
      const { run, test } = await this.lockTest(em, testResultId);
      if (isFinal(test.status)) return fail(Code.FailedPrecondition, "the test is final: drop it");
      if (test.status === "running") {
        const [lease] = await em.execute<{ lapsed: boolean }[]>(
          "select lease_expires_at < now() as lapsed from runs.test_results where id = ?",
          [test.id],
        );
        if (!lease?.lapsed) return fail(Code.Aborted, "another executor holds the lease on this test");
        // Taking over a lapsed lease counts that lapse; the last allowed one fails the test.
        if (test.lapsed_leases + 1 >= this.timing.maxAttempts) {
          return { kind: "gave_up", runId: test.run_id, effects: await this.giveUp(em, test) };
        }
      }
      // A new claim (not taking a lapsed lease over, which replaces a slot the project held).
      if (
        test.status === "queued" &&
        (await overShare(em, run.project_id, this.timing.maxRunningPerProject ?? 0))
      ) {
        // The executor drops this message, so the reconciler publishes the test again
        // REPUBLISH_AFTER_MS from now, without back-off: the test is deferred, not ignored (a count
        // of 0 stays at one interval even when the start's own bookkeeping of its first publication
        // lands after this). The dispatch deadline cannot skip it meanwhile: it applies only while no
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
      return { kind: "claimed", run, test: rows[0] as TestRow };
    });
  }

  /** FAILED after its last allowed lapse, or left untaken (caller holds the run and test locks). */
  private async giveUp(em: EntityManager, test: TestRow, summary = gaveUpSummary(test.lapsed_leases + 1)) {
    await em.execute(
      `update runs.test_results set status = 'failed', lapsed_leases = lapsed_leases + 1, summary = ?, finished_at = now()
       where id = ?`,
      [summary, test.id],
    );
    return this.settle(em, test.run_id);
  }

  heartbeat(testResultId: string, leaseToken: string): Promise<Date> {
    return this.transaction(async (em) => {
      const rows = await em.execute<TestRow[]>(
        `select ${testColumns} from runs.test_results t join runs.runs r on r.id = t.run_id
         where t.id = ? and r.charge_state = 'charged' for update of t`,
        [testResultId],
      );
      const test = rows[0] ?? fail(Code.NotFound, "no such test result");
      if (isFinal(test.status)) return fail(Code.FailedPrecondition, "the test is final: stop working on it");
      if (test.status !== "running" || test.lease_token !== leaseToken)
        return fail(Code.Aborted, "this claim is not the current one: stop working on the test");
      // Also after the lease lapsed, as long as nobody took the test over (the token still matches).
      const [updated] = await em.execute<{ lease_expires_at: string | Date }[]>(
        `update runs.test_results set lease_expires_at = now() + ? * interval '1 millisecond' where id = ?
         returning lease_expires_at`,
        [this.timing.leaseMs, test.id],
      );
      return new Date(updated?.lease_expires_at ?? Date.now());
    });
  }

  release(testResultId: string, leaseToken: string): Promise<Effects> {
    return this.transaction(async (em) => {
      const { run, test } = await this.lockTest(em, testResultId);
      if (isFinal(test.status)) return fail(Code.FailedPrecondition, "the test is final");
      if (test.lease_token !== leaseToken) return fail(Code.Aborted, "this claim is not the current one");
      if (test.status === "queued") return {}; // Already handed back by this claim.
      await em.execute(
        `update runs.test_results set status = 'queued', lease_expires_at = null, started_at = null, queued_at = now()
         where id = ?`,
        [test.id],
      );
      return { publish: [{ testResultId: test.id, runId: run.id, projectId: run.project_id }] };
    });
  }

  complete(
    testResultId: string,
    leaseToken: string,
    report: { status: RunStatus; summary: string; durationMs: number; failedStep: number },
  ): Promise<{ run: RunRow; test: TestRow; effects: Effects }> {
    return this.transaction(async (em) => {
      const { test } = await this.lockTest(em, testResultId);
      // Only here is the number of steps known (the caller checked the rest of the report).
      if (report.failedStep > test.steps.length)
        return fail(
          Code.InvalidArgument,
          `failed_step must be at most ${test.steps.length}, the number of steps`,
        );
      if (isFinal(test.status)) {
        const repeated =
          test.lease_token === leaseToken &&
          test.status === report.status &&
          (test.summary ?? "") === report.summary &&
          test.duration_ms === report.durationMs &&
          (test.failed_step ?? 0) === report.failedStep;
        if (!repeated) return fail(Code.FailedPrecondition, "the test is already final: result discarded");
        return { ...(await this.reread(em, test.run_id, test.id)), effects: {} };
      }
      if (test.status !== "running" || test.lease_token !== leaseToken)
        return fail(Code.Aborted, "this claim is not the current one: result discarded");
      await em.execute(
        `update runs.test_results set status = ?, summary = ?, duration_ms = ?, failed_step = ?, finished_at = now(),
           lease_expires_at = null
         where id = ?`,
        [report.status, report.summary, report.durationMs, report.failedStep || null, test.id],
      );
      const effects = await this.settle(em, test.run_id);
      return { ...(await this.reread(em, test.run_id, test.id)), effects };
    });
  }

  private async reread(
    em: EntityManager,
    runId: string,
    testId: string,
  ): Promise<{ run: RunRow; test: TestRow }> {
    const runs = await em.execute<RunRow[]>(`select ${runColumns} from runs.runs r where r.id = ?`, [runId]);
    const tests = await em.execute<TestRow[]>(
      `select ${testColumns} from runs.test_results t where t.id = ?`,
      [testId],
    );
    return { run: runs[0] as RunRow, test: tests[0] as TestRow };
  }

  /** The environment did not answer: every open test SKIPPED, the run SKIPPED, all its credits due back. */
  skipRun(
    runId: string,
    testResultId: string,
    leaseToken: string,
    summary: string,
  ): Promise<{ result: RunWithTests; effects: Effects }> {
    return this.transaction(async (em) => {
      const run = (await this.lockRun(em, "r.id = ?", [runId])) ?? fail(Code.NotFound, "no such run");
      const done = async (effects: Effects) => ({
        result: {
          run: (await this.reread(em, runId, testResultId)).run,
          tests: await this.testsOf(em, runId),
        },
        effects,
      });
      if (run.status === "skipped" && run.skip_reason === "environment_unreachable") return done({});
      // Finished meanwhile (cancelled, say): the claim was settled with it, so it is no longer the
      // executor's to work on (ABORTED), unlike a run that is executing (FAILED_PRECONDITION).
      if (isFinal(run.status)) return fail(Code.Aborted, "the run already finished");
      const tests = await em.execute<TestRow[]>(
        `select ${testColumns} from runs.test_results t where t.run_id = ? order by t.position for update`,
        [runId],
      );
      const claimed =
        tests.find((t) => t.id === testResultId) ?? fail(Code.NotFound, "no such test result in this run");
      if (tests.some((t) => t.status === "passed" || t.status === "failed"))
        return fail(Code.FailedPrecondition, "a test of the run already passed or failed");
      if (claimed.status !== "running" || claimed.lease_token !== leaseToken)
        return fail(Code.Aborted, "this claim is not the current one");
      await em.execute(
        `update runs.test_results set refundable = true,
           status = case when status in ('queued', 'running') then 'skipped' else status end,
           summary = case when status in ('queued', 'running') then ? else summary end,
           skip_reason = case when status in ('queued', 'running') then 'environment_unreachable' else skip_reason end,
           finished_at = coalesce(finished_at, now()), lease_expires_at = null
         where run_id = ?`,
        [summary, runId],
      );
      return done(await this.settle(em, runId, "environment_unreachable"));
    });
  }

  /**
   * Cancels a run: open tests SKIPPED (the QUEUED ones refundable). A finished run is returned as
   * it is, with alreadyFinished (decided under the run's lock, so a run finishing concurrently is
   * either cancelled or already finished, never both).
   */
  cancel(
    projectId: string,
    runId: string,
  ): Promise<{ result: RunWithTests; effects: Effects; alreadyFinished: boolean } | undefined> {
    return this.transaction(async (em) => {
      const run = await this.lockRun(em, "r.id = ? and r.project_id = ?", [runId, projectId]);
      if (!run) return undefined;
      let effects: Effects = {};
      if (!isFinal(run.status)) {
        await em.execute(
          `update runs.test_results set refundable = (status = 'queued'), status = 'skipped', skip_reason = 'cancelled',
             summary = case when status = 'queued' then 'cancelled before it ran' else 'cancelled while running' end,
             finished_at = now(), lease_expires_at = null
           where run_id = ? and status in ('queued', 'running')`,
          [runId],
        );
        effects = await this.settle(em, runId, "cancelled");
      }
      const runs = await em.execute<RunRow[]>(`select ${runColumns} from runs.runs r where r.id = ?`, [
        runId,
      ]);
      return {
        result: { run: runs[0] as RunRow, tests: await this.testsOf(em, runId) },
        effects,
        alreadyFinished: isFinal(run.status),
      };
    });
  }

  // --- refunds and publishing ---------------------------------------------------------------------

  async refundDue(runId: string): Promise<{ projectId: string; amount: number; reason: string } | undefined> {
    const rows = await this.em().execute<
      { project_id: string; refund_due: number; refund_reason: string | null }[]
    >(
      "select project_id, refund_due, refund_reason from runs.runs where id = ? and refund_due > 0 and refunded_at is null",
      [runId],
    );
    const row = rows[0];
    return row
      ? { projectId: row.project_id, amount: row.refund_due, reason: row.refund_reason ?? "refund" }
      : undefined;
  }

  async markRefunded(runId: string): Promise<void> {
    await this.em().execute("update runs.runs set refunded_at = now() where id = ? and refunded_at is null", [
      runId,
    ]);
  }

  /**
   * Bookkeeping only (when to publish again), so rows another transaction holds (a skip or a
   * cancel locking a run's tests) are passed over rather than waited for: waiting, with locks
   * taken in another order, could deadlock.
   */
  async markPublished(testResultIds: string[]): Promise<void> {
    if (testResultIds.length === 0) return;
    await this.em().execute(
      `update runs.test_results set published_at = now(), publish_count = publish_count + 1
       where id in (select id from runs.test_results where id in (select jsonb_array_elements_text(?::jsonb))
                    for update skip locked)`,
      [JSON.stringify(testResultIds)],
    );
  }

  // --- reconciler queries -------------------------------------------------------------------------

  /** Starts that never completed: abandoned ones, and pending ones older than the grace period. */
  unfinishedStarts(graceMs: number, limit: number) {
    return this.em().execute<{ id: string; project_id: string; total_tests: number }[]>(
      `select id, project_id, total_tests from runs.runs
       where charge_state = 'abandoned' or (charge_state = 'pending' and created_at < now() - ? * interval '1 millisecond')
       order by created_at limit ?`,
      [graceMs, limit],
    );
  }

  async unsettledRefunds(limit: number): Promise<string[]> {
    const rows = await this.em().execute<{ id: string }[]>(
      `select id from runs.runs where charge_state = 'charged' and refund_due > 0 and refunded_at is null
       order by created_at limit ?`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Whether executors are at work: one holds a live lease, or one claimed a test within
   * `withinMs`. Tests waiting while they are are a backlog, not tests no executor takes.
   */
  async executorsAtWork(withinMs: number): Promise<boolean> {
    const rows = await this.em().execute<{ at_work: boolean }[]>(
      `select exists (select 1 from runs.test_results where status = 'running' and lease_expires_at > now())
         or exists (select 1 from runs.test_results where started_at > now() - ? * interval '1 millisecond') as at_work`,
      [withinMs],
    );
    return rows[0]?.at_work === true;
  }

  /**
   * Open tests that need the reconciler: QUEUED past the dispatch deadline (to skip), RUNNING with
   * a lapsed lease (to fail or republish), and QUEUED ones not claimed since their last
   * publication (to republish, backing off: after `republishMs`, then twice that, … up to 64×).
   * A null `deadlineMs` (executors are at work) lets tests wait however long.
   */
  async pendingWork(republishMs: number, deadlineMs: number | null, limit: number) {
    return this.em().execute<
      { id: string; run_id: string; project_id: string; action: "skip" | "lapsed" | "republish" }[]
    >(
      `select t.id, t.run_id, r.project_id,
         case when t.status = 'running' then 'lapsed'
              when t.queued_at < now() - ? * interval '1 millisecond' then 'skip'
              else 'republish' end as action
       from runs.test_results t join runs.runs r on r.id = t.run_id
       where r.charge_state = 'charged' and t.status in ('queued', 'running') and (
         (t.status = 'running' and t.lease_expires_at < now())
         or (t.status = 'queued' and (t.queued_at < now() - ? * interval '1 millisecond'
           or coalesce(t.published_at, t.queued_at)
              + ? * interval '1 millisecond' * power(2, least(greatest(t.publish_count - 1, 0), 6)) < now())))
       order by t.queued_at limit ?`,
      [deadlineMs, deadlineMs, republishMs, limit],
    );
  }

  /**
   * Deals with one test the reconciler found (re-checked under locks, since an executor may have
   * acted meanwhile). Answers whether to publish it again, whether the test became final (so its
   * run changed), plus any refund now due.
   */
  reconcileTest(
    testResultId: string,
    republishMs: number,
    deadlineMs: number | null,
  ): Promise<{ republish: boolean; settled?: boolean; effects: Effects }> {
    return this.transaction(async (em) => {
      const run = await this.lockRun(em, "r.id = (select run_id from runs.test_results where id = ?)", [
        testResultId,
      ]);
      if (!run) return { republish: false, effects: {} };
      const rows = await em.execute<
        (TestRow & { lapsed: boolean; overdue: boolean; lapsed_long: boolean; due: boolean })[]
      >(
        `select ${testColumns},
           t.status = 'running' and t.lease_expires_at < now() as lapsed,
           t.status = 'queued' and t.queued_at < now() - ? * interval '1 millisecond' as overdue,
           t.lease_expires_at < now() - ? * interval '1 millisecond' as lapsed_long,
           t.published_at is null or t.published_at < coalesce(t.lease_expires_at, t.queued_at)
             or t.published_at + ? * interval '1 millisecond' * power(2, least(greatest(t.publish_count - 1, 0), 6)) < now() as due
         from runs.test_results t where t.id = ? for update skip locked`,
        [deadlineMs, deadlineMs, republishMs, testResultId],
      );
      const test = rows[0];
      if (!test || isFinal(test.status)) return { republish: false, effects: {} };
      if (test.overdue) {
        await em.execute(
          `update runs.test_results set status = 'skipped', refundable = true, skip_reason = 'no_executor',
             summary = 'no executor took the test before the dispatch deadline', finished_at = now()
           where id = ?`,
          [test.id],
        );
        return { republish: false, settled: true, effects: await this.settle(em, run.id) };
      }
      if (test.lapsed) {
        // The last allowed lapse, or nobody took the test over for a whole dispatch deadline.
        if (test.lapsed_leases + 1 >= this.timing.maxAttempts)
          return { republish: false, settled: true, effects: await this.giveUp(em, test) };
        if (test.lapsed_long)
          return { republish: false, settled: true, effects: await this.giveUp(em, test, untakenSummary) };
        return { republish: test.due, effects: {} };
      }
      return { republish: test.status === "queued" && test.due, effects: {} };
    });
  }
}
