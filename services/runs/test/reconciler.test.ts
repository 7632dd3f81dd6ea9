import { Code } from "@connectrpc/connect";
import { RunStatus, SkipReason, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { newId } from "@testrun/kit";
import {
  balanceOf,
  eventually,
  type InProcessRunsStack,
  leaseOf,
  operator,
  quickReconciler,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
  streamDispatches,
} from "@testrun/testing";
import { expect } from "chai";

describe("runs reconciler: lost dispatches and lapsed leases", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;

  before(async () => {
    stack = await startInProcessRunsStack(quickReconciler);
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  const getRun = async (runId: string) =>
    (await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId })).run;

  it("publishes the QUEUED tests again after Redis lost the stream", async () => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testPlan", value: project.planId },
    });
    await stack.redis.flushdb();
    const ids = new Set(run?.tests.map((t) => t.id));
    const republished = await eventually(async () => {
      const seen = new Set((await streamDispatches(stack.redis)).map((d) => d?.testResultId));
      return [...ids].every((id) => seen.has(id)) ? seen : undefined;
    }, "the tests to be published again");
    expect(republished.size).to.be.at.least(3);
    // They can be run to the end as usual.
    for (const test of run?.tests ?? []) {
      const { assignment } = await stack.executor.claimTest({ testResultId: test.id, executorId: "pod/0" });
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 1n,
      });
    }
    expect((await getRun(run?.id ?? ""))?.status).to.equal(RunStatus.PASSED);
  });

  it("refunds and removes a start that crashed between the charge and its confirmation", async () => {
    // What a crash leaves: the run stored as pending, billing having charged it.
    const runId = newId("run");
    await stack.db.query(
      `insert into runs.runs (id, project_id, environment_id, environment_base_url, name, status, total_tests,
         credits_charged, charge_state, started_at, created_at)
       values ($1, $2, $3, 'https://staging.example.com', 'crashed', 'running', 2, 2, 'pending', now(), now())`,
      [runId, project.projectId, project.environmentId],
    );
    const before = await balanceOf(stack, project.projectId);
    await stack.billing.chargeRun({ projectId: project.projectId, runId, amount: 2n });
    await eventually(async () => {
      const left = await stack.db.query("select 1 from runs.runs where id = $1", [runId]);
      return left.rowCount === 0 ? true : undefined;
    }, "the crashed start to be removed");
    expect(await balanceOf(stack, project.projectId)).to.equal(before);
    const { entries } = await stack.billing.listLedger({
      actor: operator(),
      projectId: project.projectId,
      runId,
    });
    expect(entries.map((e) => e.amount).sort()).to.deep.equal([-2n, 2n]);
  });

  it("lets another executor take over a lapsed lease, and fails the test after MAX_ATTEMPTS lapses", async () => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: [project.cases[0] ?? ""] } },
    });
    const testId = run?.tests[0]?.id ?? "";
    const first = (await stack.executor.claimTest({ testResultId: testId, executorId: "pod-a/0" }))
      .assignment;
    await rejects(stack.executor.claimTest({ testResultId: testId, executorId: "pod-b/0" }), Code.Aborted);

    // Once the lease lapsed, pod-b takes the test over as attempt 2, and pod-a's claim is void.
    const second = await eventually(
      () =>
        stack.executor.claimTest({ testResultId: testId, executorId: "pod-b/0" }).then(
          (r) => r.assignment,
          () => undefined,
        ),
      "the lease to lapse",
    );
    expect(second?.attempt).to.equal(2);
    await rejects(stack.executor.heartbeatTest(leaseOf(first)), Code.Aborted);

    // Its lease lapses too: the second lapse (MAX_ATTEMPTS=2) fails the test and the run.
    const failed = await eventually(async () => {
      const got = await getRun(run?.id ?? "");
      return got?.finished ? got : undefined;
    }, "the run to fail");
    expect(failed.status).to.equal(RunStatus.FAILED);
    expect(failed.tests[0]?.status).to.equal(TestStatus.FAILED);
    expect(failed.tests[0]?.summary).to.equal(
      "the executor stopped responding 2 times (lease lapsed); giving up",
    );
    expect(failed.tests[0]?.attempt).to.equal(2);
    await rejects(stack.executor.heartbeatTest(leaseOf(second)), Code.FailedPrecondition);
    // The test was executed (and lost) twice: its credit is not given back.
    expect(await balanceOf(stack, project.projectId)).to.equal(96n);
  });
});

describe("runs reconciler: dispatch deadline", () => {
  let stack: InProcessRunsStack;

  before(async () => {
    stack = await startInProcessRunsStack(
      { RECONCILE_INTERVAL_MS: "100", DISPATCH_DEADLINE_MS: "1200", REPUBLISH_AFTER_MS: "100" },
      6,
    );
  });
  after(async () => {
    await stack?.stop();
  });

  it("skips a run nobody took with no_executor and refunds its credits", async () => {
    const project = await seedRunsProject(stack);
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testPlan", value: project.planId },
    });
    expect(await balanceOf(stack, project.projectId)).to.equal(97n);
    const skipped = await eventually(async () => {
      const got = (
        await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId: run?.id ?? "" })
      ).run;
      return got?.finished ? got : undefined;
    }, "the run to be skipped");
    expect(skipped.status).to.equal(RunStatus.SKIPPED);
    expect(skipped.skipReason).to.equal(SkipReason.NO_EXECUTOR);
    expect(skipped.skippedTests).to.equal(3);
    await eventually(
      async () => ((await balanceOf(stack, project.projectId)) === 100n ? true : undefined),
      "the refund",
    );
  });

  it("keeps a backlog QUEUED past the deadline while an executor is at work, and skips it once none is", async () => {
    const project = await seedRunsProject(stack);
    const start = async () =>
      (
        await stack.runs.startRun({
          actor: project.key,
          projectId: project.projectId,
          selection: { case: "testPlan", value: project.planId },
        })
      ).run;
    const busy = await start();
    // An executor at work on a test of the first run (its lease, 30 s, stays live).
    const { assignment } = await stack.executor.claimTest({
      testResultId: busy?.tests[0]?.id ?? "",
      executorId: "pod-a/0",
    });
    const waiting = await start();

    // The reconciler has handled the waiting tests well past their deadline (each published again
    // at least 4 times, backing off from 100 ms: 1500 ms or more after queueing)...
    await eventually(async () => {
      const { rows } = await stack.db.query<{ published: number }>(
        "select min(publish_count) as published from runs.test_results where run_id = $1",
        [waiting?.id],
      );
      return (rows[0]?.published ?? 0) >= 5 ? true : undefined;
    }, "the waiting run's tests to be published again past the deadline");
    // ...and left them QUEUED: they are a backlog behind a busy executor, not tests nobody takes.
    const getRun = async (runId: string) =>
      (await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId })).run;
    const meanwhile = await getRun(waiting?.id ?? "");
    expect(meanwhile?.finished).to.equal(false);
    expect(meanwhile?.tests.map((t) => t.status)).to.deep.equal(Array(3).fill(TestStatus.QUEUED));

    // The executor finishes and none takes anything for a deadline: now the tests are given up.
    await stack.executor.completeTest({
      ...leaseOf(assignment),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 5n,
    });
    const skipped = await eventually(async () => {
      const run = await getRun(waiting?.id ?? "");
      return run?.finished ? run : undefined;
    }, "the waiting run to be skipped");
    expect(skipped.status).to.equal(RunStatus.SKIPPED);
    expect(skipped.skipReason).to.equal(SkipReason.NO_EXECUTOR);
  });
});
