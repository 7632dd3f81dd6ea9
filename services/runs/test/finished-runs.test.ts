import { Code } from "@connectrpc/connect";
import { type Run, RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  balanceOf,
  eventually,
  type InProcessRunsStack,
  leaseOf,
  member,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";

// ListFinishedRuns (how the automation service follows runs) and StartRun's idempotency_key (how
// a schedule's tick starts one run however often it is retried): runs.proto.
describe("runs service: finished runs for services, idempotent starts", () => {
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

  const startAsEditor = (idempotencyKey?: string) =>
    stack.runs.startRun({
      actor: member(project.members.editor),
      projectId: project.projectId,
      selection: { case: "testPlan", value: project.planId },
      ...(idempotencyKey !== undefined && { idempotencyKey }),
    });

  /** Executes every test of a run: the first fails, the others pass. */
  async function finish(run: Run | undefined): Promise<void> {
    for (const [index, test] of (run?.tests ?? []).entries()) {
      const { assignment } = await stack.executor.claimTest({ testResultId: test.id, executorId: "pod-a/0" });
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status: index === 0 ? TestStatus.FAILED : TestStatus.PASSED,
        summary: index === 0 ? "expected 200, got 500" : "",
        durationMs: 10n,
      });
    }
  }

  /** Every finished run from `cursor` on, following next_cursor to the end. */
  async function readAll(cursor = ""): Promise<{ runs: Run[]; cursor: string }> {
    const runs: Run[] = [];
    for (;;) {
      const page = await stack.runs.listFinishedRuns({ cursor, limit: 2 });
      runs.push(...page.runs);
      if (page.runs.length === 0) return { runs, cursor: page.nextCursor };
      cursor = page.nextCursor;
    }
  }

  it("lists finished runs with their tests in the order they finished, once each, after a cursor", async () => {
    const { cursor: start } = await readAll();
    const first = (await startAsEditor()).run;
    const second = (await startAsEditor()).run;
    const unfinished = (await startAsEditor()).run;
    await finish(second);
    await finish(first);

    const seen = await eventually(async () => {
      const all = await readAll(start);
      return all.runs.length >= 2 ? all : undefined;
    }, "the two finished runs");
    expect(seen.runs.map((r) => r.id)).to.deep.equal([second?.id, first?.id]);
    expect(seen.runs.map((r) => r.id)).to.not.include(unfinished?.id);
    const listed = seen.runs[0];
    expect(listed?.status).to.equal(RunStatus.FAILED);
    expect(listed?.finished).to.equal(true);
    expect(listed?.tests.map((t) => t.summary)).to.deep.equal(["expected 200, got 500", "", ""]);
    // Nothing more after the last cursor: each run is given once.
    expect((await readAll(seen.cursor)).runs).to.deep.equal([]);
  });

  it("refuses a cursor it did not make, and executors", async () => {
    await rejects(stack.runs.listFinishedRuns({ cursor: "not-a-cursor" }), Code.InvalidArgument);
    await rejects(stack.runs.listFinishedRuns({ limit: 101 }), Code.InvalidArgument);
    const refused = await stack.executor.listFinishedRuns({}).then(
      () => undefined,
      (error: { code: Code }) => error.code,
    );
    expect(refused).to.be.oneOf([Code.PermissionDenied, Code.Unauthenticated]);
  });

  it("starts a run once per idempotency key and project, charging once", async () => {
    const before = await balanceOf(stack, project.projectId);
    const [a, b] = await Promise.allSettled([
      startAsEditor("sch_x@2026-01-01T00:00Z"),
      startAsEditor("sch_x@2026-01-01T00:00Z"),
    ]);
    const started = [a, b].flatMap((outcome) =>
      outcome.status === "fulfilled" ? [outcome.value.run?.id] : [],
    );
    // Both at once: one starts it, the other is the same run or told the start is in progress.
    for (const outcome of [a, b])
      if (outcome.status === "rejected")
        expect((outcome.reason as { code: Code }).code).to.equal(Code.Aborted);
    const again = (await startAsEditor("sch_x@2026-01-01T00:00Z")).run;
    expect(new Set([...started, again?.id]).size).to.equal(1);
    expect(await balanceOf(stack, project.projectId)).to.equal(before - 3n);
    // Another key is another run.
    const other = (await startAsEditor("sch_x@2026-01-01T00:01Z")).run;
    expect(other?.id).to.not.equal(again?.id);
  });

  it("refuses an idempotency key from an API key", async () => {
    await rejects(
      stack.runs.startRun({
        actor: project.key,
        projectId: project.projectId,
        selection: { case: "testPlan", value: project.planId },
        idempotencyKey: "mine",
      }),
      Code.InvalidArgument,
    );
  });
});
