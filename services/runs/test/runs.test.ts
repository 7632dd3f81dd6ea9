import { Code } from "@connectrpc/connect";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { AmbiguousNameSchema, InsufficientCreditsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { RunStartedSchema, RunStatus, SkipReason, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { newId, VariablesGrants } from "@testrun/kit";
import {
  apiKey,
  balanceOf,
  type InProcessRunsStack,
  leaseOf,
  member,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
  streamDispatches,
  withBrokenReadBack,
} from "@testrun/testing";
import { expect } from "chai";
import { rerunName } from "../src/rpc/starts.js";

describe("runs service with real catalog, billing, PostgreSQL and Redis", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;

  before(async () => {
    stack = await startInProcessRunsStack();
  });
  beforeEach(async () => {
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  const start = (selection: Parameters<InProcessRunsStack["runs"]["startRun"]>[0]["selection"], extra = {}) =>
    stack.runs.startRun({ actor: project.key, projectId: project.projectId, selection, ...extra });
  const claim = (testResultId: string, executorId = "pod-a/0") =>
    stack.executor.claimTest({ testResultId, executorId });

  it("starts a plan run for an API key: RUNNING, tests QUEUED, charged, one dispatch per test", async () => {
    await stack.redis.del("testrun:tests");
    const { run } = await start({ case: "testPlan", value: project.planName.toUpperCase() });
    expect(run?.status).to.equal(RunStatus.RUNNING);
    expect(run?.finished).to.equal(false);
    expect(run?.name).to.equal(project.planName);
    expect(run?.testPlanId).to.equal(project.planId);
    expect(run?.environmentId).to.equal(project.environmentId);
    expect(run?.startedAt).to.not.equal(undefined);
    expect(run?.finishedAt).to.equal(undefined);
    expect(run?.durationMs).to.equal(undefined);
    expect(run?.totalTests).to.equal(3);
    expect(run?.startedByKeyId).to.match(/^key_/);
    expect(run?.startedByMemberId).to.equal(project.members.editor);
    expect(run?.url).to.equal(`https://app.testrun.example/projects/${project.projectId}/runs/${run?.id}`);
    expect(run?.tests.map((t) => t.testCaseId)).to.deep.equal(project.cases);
    for (const test of run?.tests ?? []) {
      expect(test.status).to.equal(TestStatus.QUEUED);
      expect(test.attempt).to.equal(0);
      expect(test.url).to.equal(`${run?.url}/tests/${test.id}`);
    }
    expect(await balanceOf(stack, project.projectId)).to.equal(97n);

    const dispatches = await streamDispatches(stack.redis);
    expect(dispatches.map((d) => d?.testResultId)).to.deep.equal(run?.tests.map((t) => t.id));
    expect(dispatches.every((d) => d?.runId === run?.id && d?.projectId === project.projectId)).to.equal(
      true,
    );
  });

  it("starts by ids (enabled or not, duplicates once) and by tags, for an operator", async () => {
    const byIds = await stack.runs.startRun({
      actor: operator(),
      projectId: project.projectId,
      selection: {
        case: "testCaseIds",
        value: { ids: [project.disabled, project.cases[0] ?? "", project.disabled] },
      },
    });
    expect(byIds.run?.name).to.equal("2 test cases");
    expect(byIds.run?.tests.map((t) => t.testCaseId)).to.deep.equal([project.disabled, project.cases[0]]);
    expect(byIds.run?.testPlanId).to.equal(undefined);
    expect(byIds.run?.startedByMemberId).to.equal(undefined);

    const byTags = await start({ case: "tags", value: { tags: ["SMOKE"] } }, { name: "my smoke run" });
    expect(byTags.run?.name).to.equal("my smoke run");
    expect(byTags.run?.tests.map((t) => t.testCaseId)).to.deep.equal(project.cases.slice(0, 2));
    expect(await balanceOf(stack, project.projectId)).to.equal(96n);
  });

  it("passes every selection error of the catalog on unchanged, and refuses a long name", async () => {
    await stack.catalog.catalog.createEnvironment({
      actor: operator(),
      projectId: project.projectId,
      name: "STAGING",
      baseUrl: "https://other.example.com",
    });
    const ambiguous = await rejects(
      start({ case: "testPlan", value: project.planName }, { environment: "Staging" }),
      Code.Aborted,
    );
    const detail = ambiguous.findDetails(AmbiguousNameSchema)[0];
    expect(detail?.field).to.equal("environment");
    expect(detail?.candidateIds).to.have.length(2);

    await rejects(start({ case: "testPlan", value: "no such plan" }), Code.NotFound);
    await rejects(start({ case: "testCaseIds", value: { ids: [newId("tc")] } }), Code.NotFound);
    await rejects(start({ case: undefined }), Code.InvalidArgument);
    await rejects(start({ case: "tags", value: { tags: ["nothing-has-this"] } }), Code.InvalidArgument);
    const viewer = await rejects(
      stack.runs.startRun({
        actor: member(project.members.viewer),
        projectId: project.projectId,
        selection: { case: "testPlan", value: project.planId },
      }),
      Code.PermissionDenied,
    );
    expect(viewer.rawMessage).to.not.equal("");
    await rejects(
      start({ case: "testPlan", value: project.planId }, { name: "x".repeat(201) }),
      Code.InvalidArgument,
    );
    await rejects(
      stack.runs.startRun({
        projectId: project.projectId,
        selection: { case: "testPlan", value: project.planId },
      }),
      Code.InvalidArgument,
    );
    expect(await balanceOf(stack, project.projectId)).to.equal(100n);
    expect(
      (await stack.runs.listRuns({ actor: project.key, projectId: project.projectId })).runs,
    ).to.have.length(0);
  });

  it("refuses a run the balance cannot pay: InsufficientCredits, nothing stored or charged", async () => {
    const poor = await seedRunsProject(stack, 2n);
    const error = await rejects(
      stack.runs.startRun({
        actor: poor.key,
        projectId: poor.projectId,
        selection: { case: "testPlan", value: poor.planId },
      }),
      Code.FailedPrecondition,
    );
    const detail = error.findDetails(InsufficientCreditsSchema)[0];
    expect(detail?.required).to.equal(3n);
    expect(detail?.available).to.equal(2n);
    expect(await balanceOf(stack, poor.projectId)).to.equal(2n);
    const stored = await stack.db.query("select count(*)::int as n from runs.runs where project_id = $1", [
      poor.projectId,
    ]);
    expect(stored.rows[0].n).to.equal(0);
  });

  it("drives a run to PASSED through claim, heartbeat and completion", async () => {
    const { run } = await start({ case: "tags", value: { tags: ["smoke"] } });
    const [first, second] = run?.tests ?? [];
    const a = (await claim(first?.id ?? "")).assignment;
    expect(a?.attempt).to.equal(1);
    expect(a?.maxAttempts).to.equal(3);
    expect(a?.baseUrl).to.equal("https://staging.example.com");
    expect(a?.projectId).to.equal(project.projectId);
    expect(a?.steps[0]?.kind.case).to.equal("http");
    expect(a?.steps[0]?.name).to.equal("call");
    // The grant the catalog asks for before it hands this test's executor the variable values.
    const grants = new VariablesGrants(String(stack.env.SERVICE_TOKEN));
    const scope = { projectId: project.projectId, testResultId: first?.id ?? "" };
    expect(grants.check(a?.variablesGrant ?? "", scope)).to.equal("valid");
    expect(grants.check(a?.variablesGrant ?? "", { ...scope, testResultId: second?.id ?? "" })).to.equal(
      "invalid",
    );
    await rejects(claim(first?.id ?? "", "pod-b/0"), Code.Aborted);

    const beat = await stack.executor.heartbeatTest(leaseOf(a));
    expect(beat.leaseExpiresAt).to.not.equal(undefined);
    await rejects(stack.executor.heartbeatTest({ ...leaseOf(a), leaseToken: "not-mine" }), Code.Aborted);

    const running = (
      await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId: run?.id ?? "" })
    ).run;
    expect(running?.tests[0]?.status).to.equal(TestStatus.RUNNING);
    expect(running?.tests[0]?.startedAt).to.not.equal(undefined);

    const done = await stack.executor.completeTest({
      ...leaseOf(a),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 120n,
    });
    expect(done.runStatus).to.equal(RunStatus.RUNNING);
    expect(done.runFinished).to.equal(false);
    // Repeating the same report returns the stored result.
    const again = await stack.executor.completeTest({
      ...leaseOf(a),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 120n,
    });
    expect(again.test?.durationMs).to.equal(120n);
    await rejects(claim(first?.id ?? ""), Code.FailedPrecondition);

    const b = (await claim(second?.id ?? "")).assignment;
    const last = await stack.executor.completeTest({
      ...leaseOf(b),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 80n,
    });
    expect(last.runStatus).to.equal(RunStatus.PASSED);
    expect(last.runFinished).to.equal(true);

    const finished = (
      await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId: run?.id ?? "" })
    ).run;
    expect(finished?.status).to.equal(RunStatus.PASSED);
    expect(finished?.finished).to.equal(true);
    expect(finished?.passedTests).to.equal(2);
    expect(finished?.failedTests).to.equal(0);
    const startedMs = Number(finished?.startedAt?.seconds) * 1000 + (finished?.startedAt?.nanos ?? 0) / 1e6;
    const finishedMs =
      Number(finished?.finishedAt?.seconds) * 1000 + (finished?.finishedAt?.nanos ?? 0) / 1e6;
    expect(Number(finished?.durationMs)).to.equal(Math.floor(finishedMs) - Math.floor(startedMs));
    expect(finished?.skipReason).to.equal(SkipReason.UNSPECIFIED);
    expect(finished?.tests.map((t) => t.durationMs)).to.deep.equal([120n, 80n]);
    // Nothing was given back: every test executed.
    expect(await balanceOf(stack, project.projectId)).to.equal(98n);
  });

  it("fails the run when any test fails, and validates results", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    const [t1, t2, t3] = run?.tests ?? [];
    const a1 = (await claim(t1?.id ?? "")).assignment;
    await rejects(
      stack.executor.completeTest({
        ...leaseOf(a1),
        status: TestStatus.RUNNING,
        summary: "",
        durationMs: 1n,
      }),
      Code.InvalidArgument,
    );
    await rejects(
      stack.executor.completeTest({
        ...leaseOf(a1),
        status: TestStatus.FAILED,
        summary: "a\nb",
        durationMs: 1n,
      }),
      Code.InvalidArgument,
    );
    await rejects(
      stack.executor.completeTest({
        ...leaseOf(a1),
        status: TestStatus.FAILED,
        summary: "x".repeat(301),
        durationMs: 1n,
      }),
      Code.InvalidArgument,
    );
    const summary = "step 1 log in: expected status 200, got 500";
    await stack.executor.completeTest({
      ...leaseOf(a1),
      status: TestStatus.FAILED,
      summary,
      durationMs: 10n,
    });
    const a2 = (await claim(t2?.id ?? "")).assignment;
    await stack.executor.completeTest({
      ...leaseOf(a2),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 10n,
    });
    const a3 = (await claim(t3?.id ?? "")).assignment;
    const last = await stack.executor.completeTest({
      ...leaseOf(a3),
      status: TestStatus.SKIPPED,
      summary: "n/a",
      durationMs: 0n,
    });
    expect(last.runStatus).to.equal(RunStatus.FAILED);

    const got = (
      await stack.runs.getRun({ actor: operator(), projectId: project.projectId, runId: run?.id ?? "" })
    ).run;
    expect([got?.passedTests, got?.failedTests, got?.skippedTests]).to.deep.equal([1, 1, 1]);
    expect(got?.tests[0]?.summary).to.equal(summary);
    expect(got?.finished).to.equal(true);
  });

  it("aggregates concurrent completions of one run correctly", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    const assignments = await Promise.all((run?.tests ?? []).map((t, i) => claim(t.id, `pod/${i}`)));
    const results = await Promise.all(
      assignments.map(({ assignment }) =>
        stack.executor.completeTest({
          ...leaseOf(assignment),
          status: TestStatus.PASSED,
          summary: "",
          durationMs: 5n,
        }),
      ),
    );
    expect(results.filter((r) => r.runFinished)).to.have.length(1);
    const got = (
      await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId: run?.id ?? "" })
    ).run;
    expect(got?.status).to.equal(RunStatus.PASSED);
    expect(got?.passedTests).to.equal(3);
  });

  it("keeps executor calls to the executor identity and service calls to the service identity", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    await rejects(
      stack.runs.claimTest({ testResultId: run?.tests[0]?.id ?? "", executorId: "x" }),
      Code.PermissionDenied,
    );
    await rejects(
      stack.executor.getRun({ actor: operator(), projectId: project.projectId, runId: run?.id ?? "" }),
      Code.PermissionDenied,
    );
    await rejects(claim(newId("tr")), Code.NotFound);
    await rejects(claim(run?.tests[0]?.id ?? "", ""), Code.InvalidArgument);
  });

  it("tells an executor why each of its calls was refused: code and message, nothing written", async () => {
    const refused = async (call: Promise<unknown>, code: Code, message: string) =>
      expect((await rejects(call, code)).rawMessage).to.equal(message);
    const passed = { status: TestStatus.PASSED, summary: "", durationMs: 1n };
    const unreachable = { reason: SkipReason.ENVIRONMENT_UNREACHABLE, summary: "environment unreachable" };
    const unknown = { testResultId: newId("tr"), leaseToken: "none" };
    await refused(claim(unknown.testResultId), Code.NotFound, "no such test result");
    await refused(stack.executor.heartbeatTest(unknown), Code.NotFound, "no such test result");
    await refused(
      stack.executor.releaseTest({ ...unknown, reason: "x" }),
      Code.NotFound,
      "no such test result",
    );
    await refused(
      stack.executor.completeTest({ ...unknown, ...passed }),
      Code.NotFound,
      "no such test result",
    );
    await refused(
      stack.executor.skipRun({ runId: newId("run"), ...unknown, ...unreachable }),
      Code.NotFound,
      "no such run",
    );

    const { run } = await start({ case: "testPlan", value: project.planId });
    const runId = run?.id ?? "";
    const a = (await claim(run?.tests[0]?.id ?? "")).assignment;
    const steps = a?.steps.length ?? 0;
    await refused(
      claim(a?.testResultId ?? "", "pod-b/0"),
      Code.Aborted,
      "another executor holds the lease on this test",
    );
    const stale = { ...leaseOf(a), leaseToken: "not-mine" };
    await refused(
      stack.executor.heartbeatTest(stale),
      Code.Aborted,
      "this claim is not the current one: stop working on the test",
    );
    await refused(
      stack.executor.releaseTest({ ...stale, reason: "x" }),
      Code.Aborted,
      "this claim is not the current one",
    );
    await refused(
      stack.executor.completeTest({ ...stale, ...passed }),
      Code.Aborted,
      "this claim is not the current one: result discarded",
    );
    await refused(
      stack.executor.completeTest({
        ...leaseOf(a),
        status: TestStatus.FAILED,
        summary: "",
        durationMs: 1n,
        failedStep: steps + 1,
      }),
      Code.InvalidArgument,
      `failed_step must be at most ${steps}, the number of steps`,
    );
    await refused(
      stack.executor.skipRun({ runId, ...stale, ...unreachable }),
      Code.Aborted,
      "this claim is not the current one",
    );
    await refused(
      stack.executor.skipRun({ runId, ...leaseOf(a), testResultId: newId("tr"), ...unreachable }),
      Code.NotFound,
      "no such test result in this run",
    );
    // None of the refusals changed the claim: it completes as the one current claim.
    await stack.executor.completeTest({ ...leaseOf(a), ...passed });

    await refused(claim(a?.testResultId ?? ""), Code.FailedPrecondition, "the test is final: drop it");
    await refused(
      stack.executor.heartbeatTest(leaseOf(a)),
      Code.FailedPrecondition,
      "the test is final: stop working on it",
    );
    await refused(
      stack.executor.releaseTest({ ...leaseOf(a), reason: "x" }),
      Code.FailedPrecondition,
      "the test is final",
    );
    await refused(
      stack.executor.completeTest({ ...leaseOf(a), ...passed, summary: "another report" }),
      Code.FailedPrecondition,
      "the test is already final: result discarded",
    );
    const b = (await claim(run?.tests[1]?.id ?? "")).assignment;
    await refused(
      stack.executor.skipRun({ runId, ...leaseOf(b), ...unreachable }),
      Code.FailedPrecondition,
      "a test of the run already passed or failed",
    );
    await stack.runs.cancelRun({
      actor: member(project.members.editor),
      projectId: project.projectId,
      runId,
    });
    await refused(
      stack.executor.skipRun({ runId, ...leaseOf(b), ...unreachable }),
      Code.Aborted,
      "the run already finished",
    );
  });

  it("hands a test back without counting an attempt, and publishes it again", async () => {
    const { run } = await start({ case: "testCaseIds", value: { ids: [project.cases[0] ?? ""] } });
    const testId = run?.tests[0]?.id ?? "";
    const a = (await claim(testId)).assignment;
    const before = (await streamDispatches(stack.redis)).filter((d) => d?.testResultId === testId).length;
    await stack.executor.releaseTest({ ...leaseOf(a), reason: "shutting down" });
    await stack.executor.releaseTest({ ...leaseOf(a), reason: "shutting down" });
    const after = (await streamDispatches(stack.redis)).filter((d) => d?.testResultId === testId).length;
    expect(after).to.equal(before + 1);
    await rejects(stack.executor.heartbeatTest(leaseOf(a)), Code.Aborted);
    const b = (await claim(testId, "pod-b/0")).assignment;
    expect(b?.attempt).to.equal(2);
    await rejects(stack.executor.releaseTest({ ...leaseOf(a), reason: "late" }), Code.Aborted);
    await stack.executor.completeTest({
      ...leaseOf(b),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 1n,
    });
    const got = (
      await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId: run?.id ?? "" })
    ).run;
    expect(got?.status).to.equal(RunStatus.PASSED);
  });

  it("skips an unreachable environment's run and refunds all its credits", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    expect(await balanceOf(stack, project.projectId)).to.equal(97n);
    const a = (await claim(run?.tests[0]?.id ?? "")).assignment;
    const request = {
      runId: run?.id ?? "",
      ...leaseOf(a),
      reason: SkipReason.ENVIRONMENT_UNREACHABLE,
      summary: "environment unreachable: connection refused",
    };
    const { run: skipped } = await stack.executor.skipRun(request);
    expect(skipped?.status).to.equal(RunStatus.SKIPPED);
    expect(skipped?.finished).to.equal(true);
    expect(skipped?.skipReason).to.equal(SkipReason.ENVIRONMENT_UNREACHABLE);
    expect(skipped?.skippedTests).to.equal(3);
    expect(
      skipped?.tests.every((t) => t.status === TestStatus.SKIPPED && t.summary === request.summary),
    ).to.equal(true);
    expect(await balanceOf(stack, project.projectId)).to.equal(100n);
    // Idempotent: the same call returns the run unchanged and refunds nothing more.
    expect((await stack.executor.skipRun(request)).run?.status).to.equal(RunStatus.SKIPPED);
    expect(await balanceOf(stack, project.projectId)).to.equal(100n);
    await rejects(stack.executor.heartbeatTest(leaseOf(a)), Code.FailedPrecondition);
  });

  it("refuses SkipRun once a test passed", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    const a = (await claim(run?.tests[0]?.id ?? "")).assignment;
    await stack.executor.completeTest({
      ...leaseOf(a),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 1n,
    });
    const b = (await claim(run?.tests[1]?.id ?? "")).assignment;
    await rejects(
      stack.executor.skipRun({
        runId: run?.id ?? "",
        ...leaseOf(b),
        reason: SkipReason.ENVIRONMENT_UNREACHABLE,
        summary: "x",
      }),
      Code.FailedPrecondition,
    );
  });

  it("cancels a run: open tests skipped, QUEUED ones refunded; a key whose creator lost rights and a viewer refused", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    const a = (await claim(run?.tests[0]?.id ?? "")).assignment;
    const runId = run?.id ?? "";
    const denied = await rejects(
      stack.runs.cancelRun({
        actor: apiKey(project.members.viewer, project.projectId),
        projectId: project.projectId,
        runId,
      }),
      Code.PermissionDenied,
    );
    expect(denied.rawMessage).to.equal("the key's creator can no longer start runs");
    await rejects(
      stack.runs.cancelRun({ actor: member(project.members.viewer), projectId: project.projectId, runId }),
      Code.PermissionDenied,
    );
    const { run: cancelled, alreadyFinished } = await stack.runs.cancelRun({
      actor: member(project.members.editor),
      projectId: project.projectId,
      runId,
    });
    expect(alreadyFinished).to.equal(false);
    expect(cancelled?.status).to.equal(RunStatus.SKIPPED);
    expect(cancelled?.skipReason).to.equal(SkipReason.CANCELLED);
    expect(cancelled?.finished).to.equal(true);
    // Two tests were still QUEUED; the RUNNING one used its credit.
    expect(await balanceOf(stack, project.projectId)).to.equal(99n);
    await rejects(
      stack.executor.completeTest({ ...leaseOf(a), status: TestStatus.PASSED, summary: "", durationMs: 1n }),
      Code.FailedPrecondition,
    );
    // An executor that only now finds the environment down is told the claim is no longer its own,
    // so it stops rather than runs the steps of a cancelled run.
    await rejects(
      stack.executor.skipRun({
        runId,
        ...leaseOf(a),
        reason: SkipReason.ENVIRONMENT_UNREACHABLE,
        summary: "environment unreachable: connection refused",
      }),
      Code.Aborted,
    );
    const again = await stack.runs.cancelRun({ actor: operator(), projectId: project.projectId, runId });
    expect(again.run?.finishedAt).to.deep.equal(cancelled?.finishedAt);
    expect(again.alreadyFinished).to.equal(true);
  });

  it("lets an API key cancel a run of its project when its creator can still start runs", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    const { run: cancelled, alreadyFinished } = await stack.runs.cancelRun({
      actor: project.key,
      projectId: project.projectId,
      runId: run?.id ?? "",
    });
    expect(alreadyFinished).to.equal(false);
    expect(cancelled?.skipReason).to.equal(SkipReason.CANCELLED);
    const other = await seedRunsProject(stack, 0n);
    await rejects(
      stack.runs.cancelRun({ actor: other.key, projectId: project.projectId, runId: run?.id ?? "" }),
      Code.NotFound,
    );
  });

  it("refuses every read of a key at once when its creator loses the rights the key acts with, the keys service not told", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    const ids = { actor: project.key, projectId: project.projectId, runId: run?.id ?? "" };
    const testResultId = run?.tests[0]?.id ?? "";
    /** WatchRun's first message (or its refusal); the stream is closed then. */
    const firstWatched = async () => {
      const closed = new AbortController();
      try {
        return await stack.runs.watchRun(ids, { signal: closed.signal })[Symbol.asyncIterator]().next();
      } finally {
        closed.abort();
      }
    };
    // The key reads while its creator is an Editor.
    expect((await stack.runs.getRun(ids)).run?.id).to.equal(ids.runId);
    expect((await stack.runs.listRuns(ids)).runs).to.have.length(1);
    expect((await stack.runs.getTestResult({ ...ids, testResultId })).test?.id).to.equal(testResultId);
    expect((await firstWatched()).value?.run?.id).to.equal(ids.runId);

    // The catalog's KEYS_URL leads nowhere: only the catalog knows of the loss.
    await stack.catalog.catalog.changeMemberRole({
      actor: operator(),
      memberId: project.members.editor,
      role: Role.VIEWER,
    });
    const lostRights =
      "the key's creator is no longer an Editor or above, so the key no longer works; create a new key";
    for (const read of [
      () => stack.runs.getRun(ids),
      () => stack.runs.listRuns(ids),
      () => stack.runs.getTestResult({ ...ids, testResultId }),
      firstWatched,
    ]) {
      expect((await rejects(read(), Code.PermissionDenied)).rawMessage).to.equal(lostRights);
    }
    const rerun = await rejects(stack.runs.rerunRun(ids), Code.PermissionDenied);
    expect(rerun.rawMessage).to.equal("the key's creator can no longer start runs");
  });

  it("reruns a run on its environment: every test case, or those that failed; nothing to rerun is INVALID_ARGUMENT", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId }, { name: "deploy 7" });
    const runId = run?.id ?? "";
    const [t1, t2, t3] = run?.tests ?? [];
    const complete = async (testResultId: string, status: TestStatus) => {
      const assignment = (await claim(testResultId)).assignment;
      await stack.executor.completeTest({ ...leaseOf(assignment), status, summary: "", durationMs: 1n });
    };
    await rejects(
      stack.runs.rerunRun({ actor: project.key, projectId: project.projectId, runId, failedOnly: true }),
      Code.InvalidArgument,
    );
    await complete(t1?.id ?? "", TestStatus.PASSED);
    await complete(t2?.id ?? "", TestStatus.FAILED);
    await complete(t3?.id ?? "", TestStatus.PASSED);
    const before = await balanceOf(stack, project.projectId);

    const failed = (
      await stack.runs.rerunRun({ actor: project.key, projectId: project.projectId, runId, failedOnly: true })
    ).run;
    expect(failed?.id).to.not.equal(runId);
    expect(failed?.name).to.equal("deploy 7 (rerun of failed)");
    expect(failed?.status).to.equal(RunStatus.RUNNING);
    expect(failed?.environmentId).to.equal(run?.environmentId);
    expect(failed?.tests.map((t) => t.testCaseId)).to.deep.equal([t2?.testCaseId]);
    const all = (await stack.runs.rerunRun({ actor: project.key, projectId: project.projectId, runId })).run;
    expect(all?.name).to.equal("deploy 7 (rerun)");
    expect(all?.tests.map((t) => t.testCaseId)).to.deep.equal(run?.tests.map((t) => t.testCaseId));
    expect(await balanceOf(stack, project.projectId)).to.equal(before - 4n);

    await rejects(
      stack.runs.rerunRun({
        actor: apiKey(project.members.viewer, project.projectId),
        projectId: project.projectId,
        runId,
      }),
      Code.PermissionDenied,
    );
    await rejects(
      stack.runs.rerunRun({
        actor: project.key,
        projectId: project.projectId,
        runId: "run_01m80000000000000000000000",
      }),
      Code.NotFound,
    );
    expect(rerunName("x".repeat(200), true)).to.have.length(200);
  });

  it("lists runs newest first with the limit rules, and keeps other projects' runs apart", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await start({ case: "testPlan", value: project.planId })).run?.id ?? "");
    const list = (limit: number) =>
      stack.runs.listRuns({ actor: project.key, projectId: project.projectId, limit });
    const all = (await list(0)).runs;
    expect(all.map((r) => r.id)).to.deep.equal([...ids].reverse());
    expect(all[0]?.tests).to.have.length(0);
    expect(all[0]?.testPlanId).to.equal(project.planId);
    expect(all[0]?.createdAt).to.not.equal(undefined);
    expect((await list(2)).runs.map((r) => r.id)).to.deep.equal([ids[2], ids[1]]);
    expect((await list(1000)).runs).to.have.length(3);
    await rejects(list(-1), Code.InvalidArgument);

    const other = await seedRunsProject(stack, 0n);
    const otherKey = apiKey(other.members.editor, other.projectId);
    expect((await stack.runs.listRuns({ actor: otherKey, projectId: other.projectId })).runs).to.have.length(
      0,
    );
    await rejects(
      stack.runs.getRun({ actor: otherKey, projectId: other.projectId, runId: ids[0] ?? "" }),
      Code.NotFound,
    );
    await rejects(
      stack.runs.getRun({ actor: otherKey, projectId: project.projectId, runId: ids[0] ?? "" }),
      Code.NotFound,
    );
  });

  it("returns a test result with its steps, max_attempts and failed_step; NOT_FOUND elsewhere", async () => {
    const { run } = await start({ case: "testPlan", value: project.planId });
    const runId = run?.id ?? "";
    const [t1, t2] = run?.tests ?? [];
    const a1 = (await claim(t1?.id ?? "")).assignment;
    const report = {
      ...leaseOf(a1),
      status: TestStatus.FAILED,
      summary: 'step 1 "call": got 500',
      durationMs: 3n,
    };
    // Each test case has one step: 2 is out of range, and only a FAILED test names one.
    await rejects(stack.executor.completeTest({ ...report, failedStep: 2 }), Code.InvalidArgument);
    await rejects(stack.executor.completeTest({ ...report, failedStep: -1 }), Code.InvalidArgument);
    await rejects(
      stack.executor.completeTest({ ...report, status: TestStatus.PASSED, failedStep: 1 }),
      Code.InvalidArgument,
    );
    const done = await stack.executor.completeTest({ ...report, failedStep: 1 });
    expect(done.test?.failedStep).to.equal(1);
    // Failed before any step ran: no step named.
    const a2 = (await claim(t2?.id ?? "")).assignment;
    await stack.executor.completeTest({
      ...leaseOf(a2),
      status: TestStatus.FAILED,
      summary: "x",
      durationMs: 0n,
    });

    const ids = { actor: project.key, projectId: project.projectId, runId };
    const found = await stack.runs.getTestResult({ ...ids, testResultId: t1?.id ?? "" });
    expect(found.test?.status).to.equal(TestStatus.FAILED);
    expect(found.test?.failedStep).to.equal(1);
    expect(found.test?.summary).to.equal(report.summary);
    expect(found.test?.url).to.equal(`${run?.url}/tests/${t1?.id}`);
    expect(found.maxAttempts).to.equal(3);
    expect(found.steps).to.have.length(1);
    expect(found.steps[0]?.name).to.equal("call");
    expect(found.steps[0]?.kind.case === "http" && found.steps[0].kind.value.request?.path).to.equal(
      "/login",
    );
    // GetRun renders the same tests: the step where there is one, unset elsewhere.
    const got = (await stack.runs.getRun(ids)).run;
    expect(got?.tests.map((t) => t.failedStep)).to.deep.equal([1, undefined, undefined]);
    expect(got?.tests[0]).to.deep.equal(found.test);
    const queued = await stack.runs.getTestResult({ ...ids, testResultId: run?.tests[2]?.id ?? "" });
    expect(queued.test?.status).to.equal(TestStatus.QUEUED);
    expect(queued.test?.failedStep).to.equal(undefined);

    await rejects(stack.runs.getTestResult({ ...ids, testResultId: newId("tr") }), Code.NotFound);
    const other = await seedRunsProject(stack, 0n);
    await rejects(
      stack.runs.getTestResult({
        actor: apiKey(other.members.editor, other.projectId),
        projectId: other.projectId,
        runId,
        testResultId: t1?.id ?? "",
      }),
      Code.NotFound,
    );
    // A test of another run, asked for under this one.
    const { run: second } = await start({ case: "testPlan", value: project.planId });
    await rejects(
      stack.runs.getTestResult({ ...ids, runId: second?.id ?? "", testResultId: t1?.id ?? "" }),
      Code.NotFound,
    );
  });

  it("records the version of the test case each test ran, and keeps it after the test case changes", async () => {
    const [login, search] = project.cases as [string, string];
    const catalog = stack.catalog.catalog;
    const { run: before } = await start({ case: "testPlan", value: project.planId });
    expect(before?.tests.map((t) => t.testCaseVersion)).to.deep.equal([1, 1, 1]);
    await catalog.updateTestCase({
      actor: operator(),
      projectId: project.projectId,
      testCaseId: login,
      steps: {
        steps: [{ name: "call", kind: { case: "http", value: { request: { method: "GET", path: "/v2" } } } }],
      },
    });
    await catalog.updateTestCase({
      actor: operator(),
      projectId: project.projectId,
      testCaseId: login,
      name: "login 3",
    });
    const { run: after } = await start({ case: "testCaseIds", value: { ids: [login, search] } });
    expect(after?.tests.map((t) => [t.name, t.testCaseVersion])).to.deep.equal([
      ["login 3", 3],
      ["search", 1],
    ]);

    // The first run still names version 1, and that version is what it ran.
    const ids = { actor: project.key, projectId: project.projectId, runId: before?.id ?? "" };
    const first = await stack.runs.getTestResult({ ...ids, testResultId: before?.tests[0]?.id ?? "" });
    expect(first.test).to.include({ testCaseId: login, testCaseVersion: 1, name: "login" });
    expect((await stack.runs.getRun(ids)).run?.tests.map((t) => t.testCaseVersion)).to.deep.equal([1, 1, 1]);
    const ran = await catalog.getTestCase({
      actor: operator(),
      projectId: project.projectId,
      testCaseId: login,
      version: first.test?.testCaseVersion,
    });
    expect(ran.testCase?.name).to.equal(first.test?.name);
    expect(ran.testCase?.steps).to.deep.equal(first.steps);
    expect(ran.currentVersion).to.equal(3);
  });

  it("filters runs by status, test plan and environment", async () => {
    const { environment } = await stack.catalog.catalog.createEnvironment({
      actor: operator(),
      projectId: project.projectId,
      name: "production",
      baseUrl: "https://prod.example.com",
    });
    const onPlan = (await start({ case: "testPlan", value: project.planId })).run?.id ?? "";
    const byTags = (await start({ case: "tags", value: { tags: ["smoke"] } })).run?.id ?? "";
    const elsewhere =
      (await start({ case: "testPlan", value: project.planId }, { environment: environment?.id })).run?.id ??
      "";
    const { run: cancelled } = await stack.runs.cancelRun({
      actor: operator(),
      projectId: project.projectId,
      runId: byTags,
    });
    expect(cancelled?.status).to.equal(RunStatus.SKIPPED);

    type Filters = { statuses?: RunStatus[]; testPlanId?: string; environmentId?: string; limit?: number };
    const list = async (filters: Filters) =>
      (await stack.runs.listRuns({ actor: project.key, projectId: project.projectId, ...filters })).runs.map(
        (r) => r.id,
      );
    expect(await list({})).to.deep.equal([elsewhere, byTags, onPlan]);
    expect(await list({ statuses: [RunStatus.SKIPPED] })).to.deep.equal([byTags]);
    expect(await list({ statuses: [RunStatus.RUNNING, RunStatus.PASSED] })).to.deep.equal([
      elsewhere,
      onPlan,
    ]);
    expect(await list({ statuses: [RunStatus.FAILED] })).to.deep.equal([]);
    expect(await list({ testPlanId: project.planId })).to.deep.equal([elsewhere, onPlan]);
    expect(await list({ environmentId: environment?.id })).to.deep.equal([elsewhere]);
    expect(await list({ environmentId: project.environmentId, testPlanId: project.planId })).to.deep.equal([
      onPlan,
    ]);
    expect(
      await list({ environmentId: project.environmentId, statuses: [RunStatus.SKIPPED], limit: 1 }),
    ).to.deep.equal([byTags]);
    await rejects(list({ statuses: [RunStatus.UNSPECIFIED] }), Code.InvalidArgument);
    await rejects(list({ statuses: [RunStatus.PASSED, 42 as RunStatus] }), Code.InvalidArgument);
  });

  it("pages through runs without duplicates or gaps, down to the microsecond, and refuses a bad token", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push(
        (await start({ case: "testCaseIds", value: { ids: [project.cases[0] ?? ""] } })).run?.id ?? "",
      );
    // Runs created within one millisecond (a Date could not tell them apart), two in the same
    // microsecond (told apart by id), the rest a second apart.
    const times = [
      "2026-11-20 10:00:00.000001+00",
      "2026-11-20 10:00:00.000002+00",
      "2026-11-20 10:00:00.000002+00",
      "2026-11-20 10:00:00.000003+00",
      "2026-11-20 10:00:00.000900+00",
      "2026-11-20 10:00:01+00",
      "2026-11-20 10:00:02+00",
    ];
    for (const [i, id] of ids.entries())
      await stack.db.query("update runs.runs set created_at = $1 where id = $2", [times[i], id]);
    const request = { actor: project.key, projectId: project.projectId };
    const expected = (await stack.runs.listRuns({ ...request, limit: 100 })).runs.map((r) => r.id);
    expect(new Set(expected)).to.deep.equal(new Set(ids));
    expect(expected.slice(0, 2)).to.deep.equal([ids[6], ids[5]]);
    expect((await stack.runs.listRuns({ ...request, limit: 100 })).nextPageToken).to.equal("");

    for (const size of [1, 2, 3]) {
      const seen: string[] = [];
      let pageToken = "";
      let pages = 0;
      do {
        const page = await stack.runs.listRuns({ ...request, limit: size, pageToken });
        expect(page.runs.length).to.be.at.most(size);
        seen.push(...page.runs.map((r) => r.id));
        pageToken = page.nextPageToken;
        pages++;
      } while (pageToken);
      expect(seen, `pages of ${size}`).to.deep.equal(expected);
      // No empty last page: a token is handed out only when an older run exists.
      expect(pages).to.equal(Math.ceil(expected.length / size));
    }

    const first = await stack.runs.listRuns({ ...request, limit: 3 });
    const token = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const { c, i } = JSON.parse(Buffer.from(first.nextPageToken, "base64url").toString()) as {
      c: string;
      i: string;
    };
    for (const bad of [
      "not a token",
      token({ c, i: 7 }),
      token({ c: "2026-02-31T10:00:00.000000Z", i }),
      token({ c: "yesterday", i }),
      first.nextPageToken.slice(0, -4),
    ]) {
      const error = await rejects(stack.runs.listRuns({ ...request, pageToken: bad }), Code.InvalidArgument);
      expect(error.rawMessage).to.equal("page_token is not valid");
    }
  });

  it("answers INTERNAL with the started run's id and url when the read-back fails", async () => {
    const error = await withBrokenReadBack(stack.db, () =>
      rejects(start({ case: "testPlan", value: project.planId }), Code.Internal),
    );
    const detail = error.findDetails(RunStartedSchema)[0];
    expect(detail?.runId).to.match(/^run_/);
    expect(detail?.url).to.equal(
      `https://app.testrun.example/projects/${project.projectId}/runs/${detail?.runId}`,
    );
    const { run } = await stack.runs.getRun({
      actor: project.key,
      projectId: project.projectId,
      runId: detail?.runId ?? "",
    });
    expect(run?.status).to.equal(RunStatus.RUNNING);
    expect(await balanceOf(stack, project.projectId)).to.equal(97n);
  });
});
