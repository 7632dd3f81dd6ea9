// Failure groups and run comparisons (issue 41; docs/rest-api.md, "Failure groups" and "Comparing
// runs") through the runs service with a real catalog: failures that failed the same way form one
// group, a group resolves when its cases pass and reopens when seen again, and a run compared with
// its base says exactly what is new.
import { Code } from "@connectrpc/connect";
import {
  FailureCause,
  FailureGroupState,
  RunStatus,
  TestChange,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  httpStep,
  type InProcessRunsStack,
  leaseOf,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";

/** A browser step that clicks the Buy button, as the catalog stores steps. */
const clickBuy = { name: "buy", browser: { click: { locator: { role: "button", name: "Buy" } } } };

describe("failure groups and run comparisons", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  before(async () => {
    stack = await startInProcessRunsStack();
    project = await seedRunsProject(stack, 10_000n);
  });
  after(async () => {
    await stack?.stop();
  });

  /** New test cases of one HTTP step each; `browser` makes their stored step the Buy click instead. */
  const newCases = async (count: number, tag: string, browser = false) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { testCase } = await stack.catalog.catalog.createTestCase({
        actor: operator(),
        projectId: project.projectId,
        name: `${tag} ${i}`,
        tags: [],
        enabled: true,
        steps: [httpStep(`/api/orders/${1000 + i}`)],
      });
      ids.push(testCase?.id ?? "");
    }
    if (browser)
      await stack.catalog.db.query("update catalog.test_cases set steps = $1::jsonb where id = any($2)", [
        JSON.stringify([clickBuy]),
        ids,
      ]);
    return ids;
  };

  /** A run of `cases` named `name`, each test ended as `outcome(caseId, index)` says. */
  const run = async (
    name: string,
    cases: string[],
    outcome: (caseId: string, i: number) => { status: TestStatus; summary?: string; cause?: FailureCause },
  ) => {
    const { run: started } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      name,
      selection: { case: "testCaseIds", value: { ids: cases } },
    });
    for (const [i, test] of (started?.tests ?? []).entries()) {
      const { assignment } = await stack.executor.claimTest({ testResultId: test.id, executorId: "pod-a/0" });
      const { status, summary = "", cause = FailureCause.UNSPECIFIED } = outcome(test.testCaseId, i);
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status,
        summary,
        durationMs: 10n,
        failedStep: status === TestStatus.FAILED ? 1 : 0,
        ...(status === TestStatus.FAILED && { cause }),
      });
    }
    const { run: finished } = await stack.runs.getRun({
      actor: project.key,
      projectId: project.projectId,
      runId: started?.id ?? "",
    });
    return finished;
  };
  const noBuyButton = (i: number) => ({
    status: TestStatus.FAILED,
    summary: `step 1 "buy": no element matches role=button[name="Buy"] after ${5000 + i} ms`,
    cause: FailureCause.LOCATOR,
  });

  it("groups twelve tests failing on one missing button into one group of twelve occurrences in twelve cases", async () => {
    const cases = await newCases(12, "checkout", true);
    const finished = await run("checkout", cases, (_, i) => noBuyButton(i));
    const groupIds = new Set(finished?.tests.map((t) => t.failureGroup?.id));
    expect(groupIds.size).to.equal(1);
    const groupId = [...groupIds][0] ?? "";
    expect(finished?.tests[0]?.failureGroup?.occurrences).to.equal(12);
    expect(finished?.tests[0]?.failureGroup?.casesAffected).to.equal(12);
    expect(finished?.tests[0]?.failureGroup?.firstSeenRunId).to.equal(finished?.id);

    const {
      group,
      occurrences,
      cases: groupCases,
    } = await stack.runs.getFailureGroup({
      actor: project.key,
      projectId: project.projectId,
      failureGroupId: groupId,
      limit: 5,
    });
    expect([group?.stepKind, group?.action, group?.cause]).to.deep.equal([
      "browser",
      "click",
      FailureCause.LOCATOR,
    ]);
    expect(group?.target).to.equal('role=button[name="Buy"]');
    // Quoted values and numbers masked: the timeouts differ, the group does not.
    expect(group?.message).to.equal("no element matches role=button[name={s}] after {n} ms");
    expect(group?.state).to.equal(FailureGroupState.OPEN);
    expect(occurrences).to.have.length(5);
    expect(occurrences.map((o) => o.attempt)).to.deep.equal([1, 1, 1, 1, 1]);
    expect([group?.firstSeen?.attempt, group?.lastSeen?.attempt]).to.deep.equal([1, 1]);
    expect(group?.firstSeen?.summary).to.match(/^step 1 "buy": no element matches/);
    expect(groupCases).to.have.length(12);

    // Listed first by impact.
    const { groups } = await stack.runs.listFailureGroups({
      actor: project.key,
      projectId: project.projectId,
    });
    expect(groups[0]?.id).to.equal(groupId);
    await rejects(
      stack.runs.listFailureGroups({ actor: project.key, projectId: project.projectId, limit: 101 }),
      Code.InvalidArgument,
    );
  });

  it("masks ids and numbers in an HTTP step's path, and keeps different causes apart", async () => {
    const cases = await newCases(3, "orders");
    const finished = await run("orders", cases, (_, i) =>
      i < 2
        ? {
            status: TestStatus.FAILED,
            // The step's name, as the executor quotes it (JSON), is no part of the group's message.
            summary: `step 1 ${JSON.stringify(i === 0 ? 'open "order"' : "open it")}: expected status 200, got ${500 + i}`,
            cause: FailureCause.ASSERTION,
          }
        : {
            status: TestStatus.FAILED,
            summary: "step 1: connect ECONNREFUSED 10.0.0.1:443",
            cause: FailureCause.NETWORK,
          },
    );
    const [a, b, c] = finished?.tests ?? [];
    expect(a?.failureGroup?.id).to.equal(b?.failureGroup?.id);
    expect(c?.failureGroup?.id).to.not.equal(a?.failureGroup?.id);
    const { group } = await stack.runs.getFailureGroup({
      actor: project.key,
      projectId: project.projectId,
      failureGroupId: a?.failureGroup?.id ?? "",
    });
    expect([group?.action, group?.target]).to.deep.equal(["GET", "/api/orders/{n}"]);
    expect(group?.message).to.equal("expected status {n}, got {n}");
  });

  it("resolves a group once its cases pass again, and reopens it when the failure comes back", async () => {
    const cases = await newCases(2, "cart", true);
    const failed = await run("cart", cases, (_, i) => ({
      ...noBuyButton(i),
      summary: "step 1: the cart is empty",
    }));
    const groupId = failed?.tests[0]?.failureGroup?.id ?? "";
    const state = async () =>
      (
        await stack.runs.getFailureGroup({
          actor: project.key,
          projectId: project.projectId,
          failureGroupId: groupId,
        })
      ).group?.state;
    await run("cart", [cases[0] ?? ""], () => ({ status: TestStatus.PASSED }));
    expect(await state()).to.equal(FailureGroupState.OPEN);
    await run("cart", [cases[1] ?? ""], () => ({ status: TestStatus.PASSED }));
    expect(await state()).to.equal(FailureGroupState.RESOLVED);
    await run("cart", [cases[0] ?? ""], () => ({ ...noBuyButton(0), summary: "step 1: the cart is empty" }));
    expect(await state()).to.equal(FailureGroupState.REOPENED);
  });

  it("shows a watcher of the run every new failure, also one whose test ended before the run's last", async () => {
    const [a, b] = (await newCases(2, "watched")) as [string, string];
    await run("watched", [a, b], () => ({ status: TestStatus.PASSED }));
    const { run: started } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      name: "watched",
      selection: { case: "testCaseIds", value: { ids: [a, b] } },
    });
    const ids = { actor: project.key, projectId: project.projectId, runId: started?.id ?? "" };
    const abort = new AbortController();
    const messages = stack.runs.watchRun(ids, { signal: abort.signal, timeoutMs: 0 })[Symbol.asyncIterator]();
    const until = async (done: (now: NonNullable<typeof started>) => boolean) => {
      for (;;) {
        const { value, done: ended } = await messages.next();
        if (ended) throw new Error("the watch ended first");
        if (value.run && done(value.run)) return value.run;
      }
    };
    const fail = async (testResultId: string) => {
      const { assignment } = await stack.executor.claimTest({ testResultId, executorId: "pod-a/0" });
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status: TestStatus.FAILED,
        summary: "step 1: expected status 200, got 500",
        durationMs: 10n,
        failedStep: 1,
        cause: FailureCause.ASSERTION,
      });
    };
    try {
      const [first, second] = started?.tests ?? [];
      await fail(first?.id ?? "");
      // The watcher has the first failure before the run ends: the run's end marks it new later.
      await until((now) => now.tests.some((t) => t.id === first?.id && t.status === TestStatus.FAILED));
      await fail(second?.id ?? "");
      const finished = await until((now) => now.status === RunStatus.FAILED);
      expect(finished.newFailures).to.equal(2);
      expect(finished.tests.map((t) => t.newFailure)).to.deep.equal([true, true]);
    } finally {
      abort.abort();
    }
  });

  it("compares a run with its base: exactly one new failure, the still failing and the changed steps", async () => {
    const [x, y, z] = (await newCases(3, "compare")) as [string, string, string];
    const failOn = (failing: string[]) => (caseId: string) =>
      failing.includes(caseId)
        ? {
            status: TestStatus.FAILED,
            summary: "step 1: expected status 200, got 500",
            cause: FailureCause.ASSERTION,
          }
        : { status: TestStatus.PASSED };
    const base = await run("nightly", [x, y, z], failOn([z]));
    // Y gets a new version between the runs.
    await stack.catalog.catalog.updateTestCase({
      actor: operator(),
      projectId: project.projectId,
      testCaseId: y,
      steps: { steps: [httpStep("/api/v2/orders")] },
    });
    const now = await run("nightly", [x, y, z], failOn([x, z]));
    expect(now?.status).to.equal(RunStatus.FAILED);
    expect([now?.newFailures, now?.baseRunId]).to.deep.equal([1, base?.id]);
    expect(now?.tests.filter((t) => t.newFailure).map((t) => t.testCaseId)).to.deep.equal([x]);

    const comparison = await stack.runs.compareRuns({
      actor: project.key,
      projectId: project.projectId,
      runId: now?.id ?? "",
    });
    expect([comparison.base?.id, comparison.baseRule]).to.deep.equal([base?.id, "previous"]);
    const byCase = new Map(comparison.tests.map((t) => [t.testCaseId, t]));
    expect(byCase.get(x)?.change).to.equal(TestChange.NEWLY_FAILING);
    expect(byCase.get(z)?.change).to.equal(TestChange.STILL_FAILING);
    expect(byCase.get(y)?.change).to.equal(TestChange.UNCHANGED);
    // Differences first.
    expect(comparison.tests.map((t) => t.testCaseId)).to.deep.equal([x, z, y]);
    expect(comparison.counts[TestChange.NEWLY_FAILING]).to.equal(1);
    const changed = byCase.get(y)?.stepChanges ?? [];
    expect(changed.map((c) => [c.number, c.change])).to.deep.equal([[1, "changed"]]);
    expect(changed[0]?.after).to.contain("/api/v2/orders");
    expect(byCase.get(z)?.failingSinceRunId).to.equal(base?.id);

    // A named base; another project's run is not one.
    const named = await stack.runs.compareRuns({
      actor: project.key,
      projectId: project.projectId,
      runId: now?.id ?? "",
      baseRunId: now?.id ?? "",
    });
    expect(named.baseRule).to.equal("named");
    expect(named.tests.every((t) => t.change !== TestChange.NEWLY_FAILING)).to.equal(true);
    const other = await seedRunsProject(stack);
    const foreign = await stack.runs.startRun({
      actor: other.key,
      projectId: other.projectId,
      selection: { case: "testCaseIds", value: { ids: [other.cases[0] ?? ""] } },
    });
    await rejects(
      stack.runs.compareRuns({
        actor: project.key,
        projectId: project.projectId,
        runId: now?.id ?? "",
        baseRunId: foreign.run?.id ?? "",
      }),
      Code.NotFound,
    );
  });
});
