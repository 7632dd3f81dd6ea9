// Test health and quarantine (issue 40; docs/rest-api.md, "Test health and quarantine"), through
// the runs service with a real catalog: a scripted history gives the stated verdicts, a quarantined
// failure leaves its run PASSED, and the reads are bounded.
import { Code } from "@connectrpc/connect";
import { HealthState, QuarantineEventType } from "@testrun/gen/testrun/runs/v1/health_pb";
import { RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  eventually,
  httpStep,
  type InProcessRunsStack,
  leaseOf,
  member,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";

describe("test health and quarantine", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  before(async () => {
    stack = await startInProcessRunsStack({ RECONCILE_INTERVAL_MS: "100" });
    project = await seedRunsProject(stack, 1_000n);
  });
  after(async () => {
    await stack?.stop();
  });

  /** Runs `testCaseId` once to the given outcome; answers the run's id. */
  const runOnce = async (testCaseId: string, outcome: "passed" | "failed" | "flaky") => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: [testCaseId] } },
      retries: outcome === "flaky" ? 1 : 0,
    });
    const testResultId = run?.tests[0]?.id ?? "";
    const claim = async () =>
      (await stack.executor.claimTest({ testResultId, executorId: "pod-a/0" })).assignment;
    const complete = async (status: TestStatus) =>
      stack.executor.completeTest({
        ...leaseOf(await claim()),
        status,
        summary: status === TestStatus.FAILED ? "step 1: expected status 200, got 500" : "",
        durationMs: 100n,
        failedStep: status === TestStatus.FAILED ? 1 : 0,
      });
    if (outcome === "flaky") await complete(TestStatus.FAILED);
    await complete(outcome === "passed" || outcome === "flaky" ? TestStatus.PASSED : TestStatus.FAILED);
    return run?.id ?? "";
  };
  const healthOf = async (testCaseId: string) => {
    const { health } = await stack.runs.getTestCaseHistory({
      actor: project.key,
      projectId: project.projectId,
      testCaseId,
      environmentId: project.environmentId,
    });
    return health[0];
  };
  const newVersion = (testCaseId: string) =>
    stack.catalog.catalog.updateTestCase({
      actor: operator(),
      projectId: project.projectId,
      testCaseId,
      steps: { steps: [httpStep(`/v${Math.random()}`)] },
    });

  it("calls a case that fails one run in five on one version flaky, with its interval, and stable again after a new version passes ten times", async () => {
    const testCaseId = project.cases[0] ?? "";
    for (const outcome of [
      "passed",
      "passed",
      "passed",
      "passed",
      "failed",
      "passed",
      "passed",
      "passed",
      "passed",
      "failed",
      "passed",
    ] as const)
      await runOnce(testCaseId, outcome);
    const flaky = await healthOf(testCaseId);
    expect(flaky?.state).to.equal(HealthState.FLAKY);
    expect(flaky?.sampleSize).to.equal(11);
    expect(flaky?.enoughResults).to.equal(true);
    expect(flaky?.outcomes).to.equal("pfppppfpppp");
    expect([flaky?.failureRate?.count, flaky?.failureRate?.sample]).to.deep.equal([2, 11]);
    // 2 of 11 with its 95% Wilson interval (0.051 to 0.477).
    expect(flaky?.failureRate?.low).to.be.closeTo(0.0514, 0.001);
    expect(flaky?.failureRate?.high).to.be.closeTo(0.477, 0.001);
    expect([flaky?.flipRate?.count, flaky?.flipRate?.sample]).to.deep.equal([4, 10]);
    expect(Number(flaky?.medianDurationMs)).to.equal(100);

    await newVersion(testCaseId);
    for (let i = 0; i < 4; i++) await runOnce(testCaseId, "passed");
    expect((await healthOf(testCaseId))?.state).to.equal(HealthState.UNKNOWN);
    for (let i = 0; i < 6; i++) await runOnce(testCaseId, "passed");
    const stable = await healthOf(testCaseId);
    expect(stable?.state).to.equal(HealthState.STABLE);
    // The window still holds the old version's failures: the rate says so, the state does not.
    expect(stable?.failureRate?.count).to.equal(2);
    expect(Number(stable?.resultsTotal)).to.equal(21);
  });

  it("calls a pass on retry flaky at once, and leaves the system's failures out", async () => {
    const testCaseId = project.cases[1] ?? "";
    await runOnce(testCaseId, "passed");
    await runOnce(testCaseId, "flaky");
    const health = await healthOf(testCaseId);
    expect([health?.state, health?.outcomes]).to.deep.equal([HealthState.FLAKY, "rp"]);
  });

  it("calls a case broken by a new version a new failure, then failing since its first failed run", async () => {
    const testCaseId = project.cases[2] ?? "";
    for (let i = 0; i < 3; i++) await runOnce(testCaseId, "passed");
    await newVersion(testCaseId);
    const first = await runOnce(testCaseId, "failed");
    const fresh = await healthOf(testCaseId);
    expect(fresh?.state).to.equal(HealthState.NEW_FAILURE);
    expect(fresh?.failingSince?.runId).to.equal(first);
    await runOnce(testCaseId, "failed");
    const failing = await healthOf(testCaseId);
    expect(failing?.state).to.equal(HealthState.FAILING);
    expect(failing?.failingSince?.runId).to.equal(first);
    expect(failing?.failingSince?.caseVersion).to.be.greaterThan(1);
    expect(failing?.lastFailure?.runId).to.not.equal(first);

    // The project's list puts it before the flaky and stable cases, and counts each state.
    const listed = await stack.runs.listTestHealth({ actor: project.key, projectId: project.projectId });
    expect(listed.cases[0]?.testCaseId).to.equal(testCaseId);
    expect(listed.counts[HealthState.FAILING]).to.equal(1);
    const onlyFlaky = await stack.runs.listTestHealth({
      actor: project.key,
      projectId: project.projectId,
      states: [HealthState.FLAKY],
    });
    expect(onlyFlaky.cases.map((c) => c.testCaseId)).to.deep.equal([project.cases[1]]);
    // Ids are data: quotes, backslashes and braces match nothing and fail nothing.
    const odd = await stack.runs.listTestHealth({
      actor: project.key,
      projectId: project.projectId,
      testCaseIds: ["a\\", '"}', "{x,y}", `${testCaseId}\\`],
    });
    expect(odd.cases).to.deep.equal([]);
    // 2,000 ids are taken, one more is refused.
    const many = Array.from({ length: 2_000 }, (_, i) => `tc_${i}`);
    await stack.runs.listTestHealth({ actor: project.key, projectId: project.projectId, testCaseIds: many });
    await rejects(
      stack.runs.listTestHealth({
        actor: project.key,
        projectId: project.projectId,
        testCaseIds: [...many, "tc_x"],
      }),
      Code.InvalidArgument,
    );
  });

  it("leaves a run PASSED when its only failure is quarantined, counting it, and lifts or expires the quarantine", async () => {
    const testCaseId = project.cases[2] ?? "";
    // Keys never quarantine; viewers neither.
    await rejects(
      stack.runs.quarantineTestCase({
        actor: project.key,
        projectId: project.projectId,
        testCaseId,
        reason: "flaky",
      }),
      Code.PermissionDenied,
    );
    await rejects(
      stack.runs.quarantineTestCase({
        actor: member(project.members.viewer),
        projectId: project.projectId,
        testCaseId,
        reason: "flaky",
      }),
      Code.PermissionDenied,
    );
    for (const reason of ["", "x".repeat(301), "two\nlines", "a \u0007bell", "\u202eflipped"])
      await rejects(
        stack.runs.quarantineTestCase({
          actor: member(project.members.editor),
          projectId: project.projectId,
          testCaseId,
          reason,
        }),
        Code.InvalidArgument,
      );
    await rejects(
      stack.runs.quarantineTestCase({
        actor: member(project.members.editor),
        projectId: project.projectId,
        testCaseId,
        reason: "known broken",
        days: 91,
      }),
      Code.InvalidArgument,
    );
    const { quarantine } = await stack.runs.quarantineTestCase({
      actor: member(project.members.editor),
      projectId: project.projectId,
      testCaseId,
      reason: "checkout is broken upstream (JIRA-12)",
    });
    expect(quarantine?.active).to.equal(true);
    expect(quarantine?.startedByMemberId).to.equal(project.members.editor);
    const days = (Number(quarantine?.expiresAt?.seconds) - Number(quarantine?.startedAt?.seconds)) / 86_400;
    expect(days).to.equal(14);

    const runId = await runOnce(testCaseId, "failed");
    const { run } = await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId });
    expect([run?.status, run?.failedTests, run?.quarantinedFailures]).to.deep.equal([RunStatus.PASSED, 1, 1]);
    expect(run?.tests[0]?.status).to.equal(TestStatus.FAILED);
    expect(run?.tests[0]?.quarantined).to.equal(true);
    expect(run?.tests[0]?.health?.state).to.equal(HealthState.QUARANTINED);
    expect(run?.tests[0]?.health?.judged).to.equal(HealthState.FAILING);

    const lifted = await stack.runs.liftQuarantine({
      actor: member(project.members.editor),
      projectId: project.projectId,
      testCaseId,
    });
    expect([lifted.quarantine?.active, lifted.quarantine?.liftedByMemberId]).to.deep.equal([
      false,
      project.members.editor,
    ]);
    // A run started now fails on it again.
    const after = await runOnce(testCaseId, "failed");
    const failed = (
      await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId: after })
    ).run;
    expect([failed?.status, failed?.quarantinedFailures]).to.deep.equal([RunStatus.FAILED, 0]);

    // Expiry: one quarantine past its end is ended by the reconciler, with its event.
    await stack.runs.quarantineTestCase({
      actor: member(project.members.editor),
      projectId: project.projectId,
      testCaseId,
      reason: "again",
      days: 1,
    });
    await stack.db.query(
      "update runs.quarantines set expires_at = now() - interval '1 second' where test_case_id = $1 and ended_at is null",
      [testCaseId],
    );
    const ended = await eventually(async () => {
      const { quarantines } = await stack.runs.listQuarantines({
        actor: project.key,
        projectId: project.projectId,
        testCaseId,
        includeEnded: true,
      });
      return quarantines.every((q) => q.endedAt) ? quarantines : undefined;
    }, "the quarantine to expire");
    expect(ended).to.have.length(2);
    const { events } = await stack.runs.listQuarantineEvents({});
    const mine = events.filter((e) => e.quarantine?.testCaseId === testCaseId).map((e) => e.type);
    expect(mine).to.deep.equal([
      QuarantineEventType.STARTED,
      QuarantineEventType.LIFTED,
      QuarantineEventType.STARTED,
      QuarantineEventType.EXPIRED,
    ]);
  });

  it("pages a case's history newest first, and refuses limits and cursors past its bounds", async () => {
    const testCaseId = project.cases[1] ?? "";
    const read = (cursor = "", limit = 1) =>
      stack.runs.getTestCaseHistory({
        actor: project.key,
        projectId: project.projectId,
        testCaseId,
        limit,
        cursor,
      });
    const first = await read();
    expect(first.entries).to.have.length(1);
    expect(first.entries[0]?.flaky).to.equal(true);
    expect(first.entries[0]?.attempts).to.equal(2);
    expect(first.entries[0]?.startedByKeyId).to.not.equal(undefined);
    const second = await read(first.nextCursor);
    expect(second.entries[0]?.status).to.equal(TestStatus.PASSED);
    expect(second.entries[0]?.flaky).to.equal(false);
    expect(second.nextCursor).to.equal("");
    await rejects(read("", 101), Code.InvalidArgument);
    await rejects(read("not-a-cursor"), Code.InvalidArgument);
    // Another project's key reads nothing of it.
    const other = await seedRunsProject(stack);
    await rejects(
      stack.runs.getTestCaseHistory({ actor: other.key, projectId: project.projectId, testCaseId }),
      Code.NotFound,
    );
  });
});
