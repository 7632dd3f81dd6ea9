import { type Orm, type TestKind, testKinds } from "@testrun/kit";
import { testKindSql } from "../dispatcher.js";
import type { RepairKind } from "../metrics.js";
import { isFinal, type TestRow, testColumns } from "../rows.js";
import { untakenRetrySummary } from "./attempts.js";
import { lockRun, transaction } from "./locking.js";
import { type Effects, giveUp, settle } from "./settle.js";

/** A test QUEUED past the dispatch deadline when the executors said nothing of why none took it. */
const noExecutorSummary = "no executor took the test before the dispatch deadline";

/** A lapsed test that nobody took over while no executor was at work, for a whole dispatch deadline. */
const untakenSummary =
  "the executor stopped responding (lease lapsed) and no executor took the test over before the dispatch deadline";

/**
 * The reconciler's reads and writes (reconciler.ts): starts that never completed, refunds not yet
 * settled, and open tests to publish again, skip or fail.
 */
export class ReconcileStore {
  constructor(
    private readonly orm: Orm,
    /** MAX_ATTEMPTS: the lapsed leases after which a test is FAILED. */
    private readonly maxAttempts: number,
  ) {}

  /** Starts that never completed: abandoned ones, and pending ones older than the grace period. */
  unfinishedStarts(graceMs: number, limit: number) {
    return this.orm.em.fork().execute<{ id: string; project_id: string; total_tests: number }[]>(
      `select id, project_id, total_tests from runs.runs
       where charge_state = 'abandoned' or (charge_state = 'pending' and created_at < now() - ? * interval '1 millisecond')
       order by created_at limit ?`,
      [graceMs, limit],
    );
  }

  async unsettledRefunds(limit: number): Promise<string[]> {
    const rows = await this.orm.em.fork().execute<{ id: string }[]>(
      `select id from runs.runs where charge_state = 'charged' and refund_due > 0 and refunded_at is null
       order by created_at limit ?`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Whether executors are at work, for each kind of test (dispatcher.ts): one holds a live lease
   * of a test of that kind, or one claimed such a test within `withinMs`. Tests waiting while they
   * are are a backlog, not tests no executor takes. Per kind, since separate executor pools take
   * separate kinds: busy HTTP executors say nothing of whether any executor takes browser tests.
   */
  async executorsAtWork(withinMs: number): Promise<Record<TestKind, boolean>> {
    const atWork = (kind: TestKind) =>
      `exists (select 1 from runs.test_results t where t.status = 'running' and t.lease_expires_at > now()
                 and ${testKindSql("t")} = '${kind}')
       or exists (select 1 from runs.test_results t where t.started_at > now() - ? * interval '1 millisecond'
                 and ${testKindSql("t")} = '${kind}')`;
    const rows = await this.orm.em.fork().execute<Record<TestKind, boolean>[]>(
      `select ${testKinds.map((kind) => `${atWork(kind)} as ${kind}`).join(", ")}`,
      testKinds.flatMap(() => [withinMs, withinMs]),
    );
    return Object.fromEntries(testKinds.map((kind) => [kind, rows[0]?.[kind] === true])) as Record<
      TestKind,
      boolean
    >;
  }

  /**
   * Open tests that need the reconciler: QUEUED past the dispatch deadline of their kind (to skip),
   * RUNNING with a lapsed lease (to fail or republish), and QUEUED ones not claimed since their last
   * publication (to republish, backing off: after `republishMs`, then twice that, … up to 64×).
   * A null deadline (executors of that kind are at work) lets tests of the kind wait however long.
   */
  async pendingWork(republishMs: number, deadlines: Record<TestKind, number | null>, limit: number) {
    return this.orm.em.fork().execute<
      {
        id: string;
        run_id: string;
        project_id: string;
        kind: TestKind;
        action: "skip" | "lapsed" | "republish";
      }[]
    >(
      `select t.id, t.run_id, r.project_id, k.kind,
         case when t.status = 'running' then 'lapsed'
              when t.queued_at < now() - k.deadline_ms * interval '1 millisecond' then 'skip'
              else 'republish' end as action
       from runs.test_results t join runs.runs r on r.id = t.run_id
         cross join lateral (select kind, case kind ${testKinds.map(() => "when ? then ?::bigint").join(" ")} end as deadline_ms
                             from (select ${testKindSql("t")} as kind) named) k
       where r.charge_state = 'charged' and t.status in ('queued', 'running') and (
         (t.status = 'running' and t.lease_expires_at < now())
         or (t.status = 'queued' and (t.queued_at < now() - k.deadline_ms * interval '1 millisecond'
           or coalesce(t.published_at, t.queued_at)
              + ? * interval '1 millisecond' * power(2, least(greatest(t.publish_count - 1, 0), 6)) < now())))
       order by t.queued_at limit ?`,
      [...testKinds.flatMap((kind) => [kind, deadlines[kind]]), republishMs, limit],
    );
  }

  /**
   * Deals with one test the reconciler found (re-checked under locks, since an executor may have
   * acted meanwhile). Answers whether to publish it again, whether the test became final (so its
   * run changed), plus any refund now due. `skipSummary`: what a test skipped past the deadline
   * says (why no executor here can run it, when known: executor-kinds.ts).
   */
  reconcileTest(
    testResultId: string,
    republishMs: number,
    deadlineMs: number | null,
    skipSummary = noExecutorSummary,
  ): Promise<{ republish: boolean; settled?: boolean; repair?: RepairKind; effects: Effects }> {
    return transaction(this.orm, async (em) => {
      const run = await lockRun(em, "r.id = (select run_id from runs.test_results where id = ?)", [
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
      if (test.overdue && test.earlier_attempts.some((attempt) => attempt.status === "failed")) {
        // A retry nobody took: the test ran, so it FAILED, for the system's want of an executor,
        // and keeps its credit unless no attempt of its own ran. (A test only handed back is
        // SKIPPED as one never claimed, below.)
        await em.execute(
          `update runs.test_results set status = 'failed', cause = 'no_executor', summary = ?, finished_at = now(),
             refundable = (failed_attempts = 0)
           where id = ?`,
          [untakenRetrySummary, test.id],
        );
        return {
          republish: false,
          settled: true,
          repair: "skipped_no_executor",
          effects: await settle(em, run.id),
        };
      }
      if (test.overdue) {
        await em.execute(
          `update runs.test_results set status = 'skipped', refundable = true, skip_reason = 'no_executor',
             summary = ?, finished_at = now()
           where id = ?`,
          [skipSummary, test.id],
        );
        return {
          republish: false,
          settled: true,
          repair: "skipped_no_executor",
          effects: await settle(em, run.id),
        };
      }
      if (test.lapsed) {
        // The last allowed lapse, or nobody took the test over for a whole dispatch deadline.
        if (test.lapsed_leases + 1 >= this.maxAttempts)
          return { republish: false, settled: true, repair: "given_up", effects: await giveUp(em, test) };
        if (test.lapsed_long)
          return {
            republish: false,
            settled: true,
            repair: "timed_out",
            effects: await giveUp(em, test, untakenSummary),
          };
        return { republish: test.due, effects: {} };
      }
      return { republish: test.status === "queued" && test.due, effects: {} };
    });
  }
}
