// Fair claiming end to end: an executor, the real runs service (both in-process) (MAX_RUNNING_PER_PROJECT=1)
// with its PostgreSQL and Redis, and a target whose answers the test holds. One project's backlog
// fills the executor's slots; another project's test, queued behind that backlog, still runs as
// soon as a slot frees, and the backlog's refused tests come back and run later.
import { RunStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { executorGroup, testStream } from "@testrun/kit";
import {
  eventually,
  httpStep,
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { HeldTarget } from "../../../test/held-target.js";
import { type InProcessExecutor, startExecutor } from "./in-process.js";

describe("executor with fair claiming between projects", function () {
  this.timeout(60_000);
  let stack: InProcessRunsStack;
  let target: HeldTarget;
  let executor: InProcessExecutor;

  before(async () => {
    stack = await startInProcessRunsStack(
      { MAX_RUNNING_PER_PROJECT: "1", REPUBLISH_AFTER_MS: "300", RECONCILE_INTERVAL_MS: "100" },
      8,
    );
    target = await HeldTarget.start();
    executor = await startExecutor(stack, {
      REDIS_URL: String(stack.env.REDIS_URL),
      CONCURRENCY: "2",
      // The held target listens on loopback, which the executor's egress guard refuses by default.
      EGRESS_ALLOW_CIDRS: "127.0.0.0/8",
    });
  });
  after(async () => {
    await executor?.stop();
    await target?.stop();
    await stack?.stop();
  });

  /** A project whose default environment is the held target. */
  const projectOnTarget = async () => {
    const project = await seedRunsProject(stack);
    const { environment } = await stack.catalog.catalog.createEnvironment({
      actor: operator(),
      projectId: project.projectId,
      name: "held target",
      baseUrl: target.url,
    });
    return { project, environmentId: environment?.id ?? "" };
  };
  /** Starts a run of `count` test cases of one GET step to `path`. */
  const startRun = async (
    { project, environmentId }: { project: RunsProject; environmentId: string },
    path: string,
    count: number,
  ) => {
    const ids = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const { testCase } = await stack.catalog.catalog.createTestCase({
          actor: operator(),
          projectId: project.projectId,
          name: `${path} ${i + 1}`,
          tags: [],
          enabled: true,
          steps: [httpStep(path)],
        });
        return testCase?.id ?? "";
      }),
    );
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      environment: environmentId,
      selection: { case: "testCaseIds", value: { ids } },
    });
    return run?.id ?? "";
  };
  const finished = (project: RunsProject, runId: string) =>
    eventually(async () => {
      const { run } = await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId });
      return run?.finishedAt ? run : undefined;
    }, `run ${runId} to finish`);

  it("runs another project's test behind a backlog while the backlog's project holds its share", async () => {
    const a = await projectOnTarget();
    const b = await projectOnTarget();
    const releaseFirst = target.hold("/a/first");
    const releaseBacklog = target.hold("/a/backlog");
    try {
      await startRun(a, "/a/first", 1);
      await target.arrived("/a/first");
      // Alone, A takes the executor's second slot too, beyond its share of 1.
      const backlog = await startRun(a, "/a/backlog", 8);
      await target.arrived("/a/backlog");

      // B's test is published behind A's seven waiting ones. The slot /a/first frees goes to it:
      // A, holding its share while B waits, is refused each of its backlog's tests.
      const quick = await startRun(b, "/b/quick", 1);
      releaseFirst();
      // While A's backlog is still held (were its tests claimed instead, both slots would stay
      // held and B's run would never end).
      const bRun = await finished(b.project, quick);
      expect(bRun).to.include({ status: RunStatus.PASSED, passedTests: 1 });

      // The refused tests were published again and run once B no longer waits.
      releaseBacklog();
      const aRun = await finished(a.project, backlog);
      expect(aRun).to.include({ status: RunStatus.PASSED, passedTests: 8 });
      // Every refused entry was acknowledged, none left pending to be taken over and claimed again.
      await eventually(async () => {
        const [pending] = (await stack.redis.xpending(testStream, executorGroup)) as [number];
        return pending === 0 ? true : undefined;
      }, "no entry of the executors' stream pending");
    } finally {
      releaseFirst();
      releaseBacklog();
    }
  });
});
