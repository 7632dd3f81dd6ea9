// Attempts, retries and causes (issue 39; docs/rest-api.md, "Attempts, retries and causes"): a
// FAILED attempt is retried while the test's retries allow, a pass after a failure of the test's
// own is flaky, the system's causes are retried without using the retries and never make a test
// flaky, every attempt is kept, and a test costs one credit whatever its attempts.
import { Code } from "@connectrpc/connect";
import {
  FailureCause,
  RunStatus,
  type TestAssignment,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  balanceOf,
  eventually,
  type InProcessRunsStack,
  leaseOf,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";

describe("attempts, retries and causes", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  before(async () => {
    stack = await startInProcessRunsStack({ LEASE_MS: "1000", MAX_ATTEMPTS: "2" });
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  /** A run of the project's first case (or `cases`), with `retries` for each of its tests. */
  const startRun = async (retries?: number, cases = [project.cases[0] ?? ""]) => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: cases } },
      ...(retries !== undefined && { retries }),
    });
    return { runId: run?.id ?? "", tests: (run?.tests ?? []).map((t) => t.id) };
  };
  const claim = async (testResultId: string, executorId = "pod-a/0") =>
    (await stack.executor.claimTest({ testResultId, executorId })).assignment as TestAssignment;
  const fail = (a: TestAssignment, cause: FailureCause, summary = "step 1: expected status 200, got 500") =>
    stack.executor.completeTest({
      ...leaseOf(a),
      status: TestStatus.FAILED,
      summary,
      durationMs: 12n,
      failedStep: 1,
      stepResults: [{ number: 1, status: TestStatus.FAILED, durationMs: 12n }],
      cause,
    });
  const pass = (a: TestAssignment) =>
    stack.executor.completeTest({
      ...leaseOf(a),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 7n,
      stepResults: [{ number: 1, status: TestStatus.PASSED, durationMs: 7n }],
    });
  const getRun = async (runId: string) =>
    (await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId })).run;

  it("retries a failed attempt while the run's retries allow; a pass then is flaky and counted", async () => {
    const { runId, tests } = await startRun(1);
    const testId = tests[0] ?? "";
    const first = await claim(testId, "pod-a/0");
    const failed = await fail(first, FailureCause.ASSERTION);
    expect(failed.retried).to.equal(true);
    expect(failed.runFinished).to.equal(false);
    expect(failed.test?.status).to.equal(TestStatus.QUEUED);
    expect(failed.test?.attempts.map((a) => [a.number, a.status, a.cause, a.executorId])).to.deep.equal([
      [1, TestStatus.FAILED, FailureCause.ASSERTION, "pod-a/0"],
    ]);

    const second = await claim(testId, "pod-b/0");
    expect(second.attempt).to.equal(2);
    const passed = await pass(second);
    expect(passed.retried).to.equal(false);
    expect(passed.runFinished).to.equal(true);
    const run = await getRun(runId);
    expect(run?.status).to.equal(RunStatus.PASSED);
    expect([run?.passedTests, run?.failedTests, run?.flakyTests]).to.deep.equal([1, 0, 1]);
    const test = run?.tests[0];
    expect([test?.status, test?.flaky, test?.cause, test?.retries]).to.deep.equal([
      TestStatus.PASSED,
      true,
      FailureCause.UNSPECIFIED,
      1,
    ]);
    // The test's own fields are its last attempt's; the attempts keep what differed.
    expect(test?.summary).to.equal("");
    expect(
      test?.attempts.map((a) => [a.number, a.status, a.cause, a.summary, a.failedStep, a.executorId]),
    ).to.deep.equal([
      [1, TestStatus.FAILED, FailureCause.ASSERTION, "step 1: expected status 200, got 500", 1, "pod-a/0"],
      [2, TestStatus.PASSED, FailureCause.UNSPECIFIED, "", undefined, "pod-b/0"],
    ]);
    expect(test?.attempts.map((a) => Number(a.durationMs))).to.deep.equal([12, 7]);
    expect(test?.attempts[0]?.stepResults.map((s) => s.status)).to.deep.equal([TestStatus.FAILED]);
    expect(test?.attempts.every((a) => a.startedAt && a.finishedAt)).to.equal(true);
  });

  it("ends FAILED with the last attempt's cause once the retries are used up, not flaky", async () => {
    const { runId, tests } = await startRun(1);
    const testId = tests[0] ?? "";
    expect((await fail(await claim(testId), FailureCause.TIMEOUT, "step 1: timed out")).retried).to.equal(
      true,
    );
    const last = await fail(await claim(testId), FailureCause.NETWORK, "step 1: connection refused");
    expect(last.retried).to.equal(false);
    expect(last.runFinished).to.equal(true);
    const test = (await getRun(runId))?.tests[0];
    expect([test?.status, test?.flaky, test?.cause, test?.summary]).to.deep.equal([
      TestStatus.FAILED,
      false,
      FailureCause.NETWORK,
      "step 1: connection refused",
    ]);
    expect(test?.attempts.map((a) => a.cause)).to.deep.equal([FailureCause.TIMEOUT, FailureCause.NETWORK]);
  });

  it("takes the case's retries (0 here) when the run names none: one failed attempt ends the test", async () => {
    const { runId, tests } = await startRun();
    const done = await fail(await claim(tests[0] ?? ""), FailureCause.UNSPECIFIED);
    expect(done.retried).to.equal(false);
    const test = (await getRun(runId))?.tests[0];
    // An executor that names no cause for a failure: ASSERTION.
    expect([test?.status, test?.cause, test?.retries, test?.attempts.length]).to.deep.equal([
      TestStatus.FAILED,
      FailureCause.ASSERTION,
      0,
      1,
    ]);
  });

  it("retries the browser's failure without using the retries and never calls the pass flaky", async () => {
    const { runId, tests } = await startRun(0);
    const testId = tests[0] ?? "";
    const crashed = await fail(await claim(testId), FailureCause.BROWSER, "the browser crashed");
    expect(crashed.retried).to.equal(true);
    await pass(await claim(testId));
    const run = await getRun(runId);
    expect([run?.status, run?.flakyTests, run?.tests[0]?.flaky]).to.deep.equal([RunStatus.PASSED, 0, false]);
    expect(run?.tests[0]?.attempts.map((a) => a.cause)).to.deep.equal([
      FailureCause.BROWSER,
      FailureCause.UNSPECIFIED,
    ]);
  });

  it("fails a test whose browser never starts after MAX_ATTEMPTS attempts, as the system's cause, and gives its credit back", async () => {
    const before = await balanceOf(stack, project.projectId);
    const { runId, tests } = await startRun(3);
    const testId = tests[0] ?? "";
    expect(await balanceOf(stack, project.projectId)).to.equal(before - 1n);
    expect(
      (await fail(await claim(testId), FailureCause.BROWSER, "the browser did not start")).retried,
    ).to.equal(true);
    const last = await fail(await claim(testId), FailureCause.BROWSER, "the browser did not start");
    expect(last.retried).to.equal(false);
    const test = (await getRun(runId))?.tests[0];
    expect([test?.status, test?.cause, test?.attempts.length]).to.deep.equal([
      TestStatus.FAILED,
      FailureCause.BROWSER,
      2,
    ]);
    // Never executed for want of a browser: refunded as a skipped test is.
    await eventually(
      async () => ((await balanceOf(stack, project.projectId)) === before ? true : undefined),
      "the credit to be refunded",
    );
  });

  it("keeps an attempt whose executor was lost (EXECUTOR_LOST) and does not make the later pass flaky", async () => {
    const { runId, tests } = await startRun(0);
    const testId = tests[0] ?? "";
    await claim(testId, "pod-a/0");
    const second = await eventually(
      () =>
        stack.executor.claimTest({ testResultId: testId, executorId: "pod-b/0" }).then(
          (r) => r.assignment,
          () => undefined,
        ),
      "the lease to lapse",
    );
    await pass(second);
    const test = (await getRun(runId))?.tests[0];
    expect([test?.status, test?.flaky]).to.deep.equal([TestStatus.PASSED, false]);
    expect(test?.attempts.map((a) => [a.status, a.cause, a.executorId])).to.deep.equal([
      [TestStatus.FAILED, FailureCause.EXECUTOR_LOST, "pod-a/0"],
      [TestStatus.PASSED, FailureCause.UNSPECIFIED, "pod-b/0"],
    ]);
    expect(test?.attempts[0]?.summary).to.equal("the executor stopped responding (lease lapsed)");
  });

  it("answers a repeated report of a retried attempt as the first time, changing nothing", async () => {
    const { runId, tests } = await startRun(2);
    const first = await claim(tests[0] ?? "");
    const once = await fail(first, FailureCause.LOCATOR, "step 1: no element matches #buy");
    const twice = await fail(first, FailureCause.LOCATOR, "step 1: no element matches #buy");
    expect(twice.retried).to.equal(true);
    expect(twice.test?.attempts.length).to.equal(1);
    expect(twice.test?.attempts[0]?.finishedAt).to.deep.equal(once.test?.attempts[0]?.finishedAt);
    // A different report under the same ended claim is refused.
    await rejects(fail(first, FailureCause.ASSERTION), Code.FailedPrecondition);
    await stack.runs.cancelRun({ actor: operator(), projectId: project.projectId, runId });
  });

  it("refuses causes an executor may not report and retries out of range, storing nothing", async () => {
    const { runId, tests } = await startRun(0);
    const a = await claim(tests[0] ?? "");
    expect((await rejects(fail(a, FailureCause.EXECUTOR_LOST), Code.InvalidArgument)).rawMessage).to.match(
      /EXECUTOR_LOST/,
    );
    await rejects(fail(a, FailureCause.NO_EXECUTOR), Code.InvalidArgument);
    const passWithCause = stack.executor.completeTest({
      ...leaseOf(a),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 1n,
      cause: FailureCause.ASSERTION,
    });
    expect((await rejects(passWithCause, Code.InvalidArgument)).rawMessage).to.match(
      /cause must be UNSPECIFIED/,
    );
    expect((await getRun(runId))?.tests[0]?.status).to.equal(TestStatus.RUNNING);
    for (const retries of [-1, 4])
      expect((await rejects(startRun(retries), Code.InvalidArgument)).rawMessage).to.equal(
        "retries must be 0 to 3",
      );
    await stack.runs.cancelRun({ actor: operator(), projectId: project.projectId, runId });
  });
});
