// Fair claiming (MAX_RUNNING_PER_PROJECT): a project holding its share of the executors' slots
// while another project's tests wait is refused new claims (RESOURCE_EXHAUSTED), its test stays
// QUEUED and is published again; alone, a project uses every slot; taking over a lapsed lease is
// never refused; concurrent claims of one project cannot overshoot its share.
import { Code } from "@connectrpc/connect";
import { TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  eventually,
  type InProcessRunsStack,
  leaseOf,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
  streamDispatches,
} from "@testrun/testing";
import { expect } from "chai";
import pg from "pg";
import { claimLockKey } from "../src/fair-share.js";

describe("fair claiming between projects", () => {
  let stack: InProcessRunsStack;
  before(async () => {
    stack = await startInProcessRunsStack(
      { MAX_RUNNING_PER_PROJECT: "1", REPUBLISH_AFTER_MS: "300", RECONCILE_INTERVAL_MS: "100" },
      7,
    );
  });
  after(async () => {
    await stack?.stop();
  });

  // Each case cancels the runs it started: their leases and QUEUED tests would otherwise make the
  // next case's projects wait on (or be waited on by) projects of an earlier one.
  const started: { projectId: string; runId: string }[] = [];
  afterEach(async () => {
    for (const { projectId, runId } of started.splice(0))
      await stack.runs.cancelRun({ actor: operator(), projectId, runId });
  });

  const runOf = new Map<string, string>();
  const startPlan = async (project: RunsProject) => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testPlan", value: project.planName },
    });
    started.push({ projectId: project.projectId, runId: run?.id ?? "" });
    for (const t of run?.tests ?? []) runOf.set(t.id, run?.id ?? "");
    return (run?.tests ?? []).map((t) => t.id) as [string, string, string];
  };
  const claim = async (testResultId: string) =>
    (await stack.executor.claimTest({ testResultId, executorId: "pod-a/0" })).assignment;
  const refused = (testResultId: string) =>
    rejects(stack.executor.claimTest({ testResultId, executorId: "pod-a/0" }), Code.ResourceExhausted);
  const statusOf = async (project: RunsProject, testResultId: string) =>
    (
      await stack.runs.getTestResult({
        actor: project.key,
        projectId: project.projectId,
        runId: runOf.get(testResultId) ?? "",
        testResultId,
      })
    ).test;
  const publications = async (testResultId: string) =>
    (await streamDispatches(stack.redis)).filter((d) => d?.testResultId === testResultId).length;

  it("lets a lone project use every slot, and holds it to its share only while another project waits", async () => {
    const a = await seedRunsProject(stack);
    const b = await seedRunsProject(stack);
    const [a1, a2, a3] = await startPlan(a);
    // Alone: beyond its share of 1.
    const heldByA = [await claim(a1), await claim(a2)];

    const [b1, b2, b3] = await startPlan(b);
    const error = await refused(a3);
    expect(error.rawMessage).to.equal(
      "the project holds its share of the executors while other projects wait: the test stays queued and is published again later; take the next one",
    );
    expect(await statusOf(a, a3)).to.include({ status: TestStatus.QUEUED, attempt: 0 });

    // B is at its share too, but the only project waiting (A) holds more than its own: B goes on.
    await claim(b1);
    await claim(b2);

    // A's tests end: A waits with nothing running, so B (at its share) must leave it the slot.
    for (const held of heldByA)
      await stack.executor.completeTest({
        ...leaseOf(held),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 1n,
      });
    await refused(b3);
    expect(await statusOf(b, b3)).to.include({ status: TestStatus.QUEUED, attempt: 0 });
    expect((await claim(a3))?.testResultId).to.equal(a3);

    // The refused test is published again for an executor to claim later.
    const before = await publications(b3);
    await eventually(
      async () => ((await publications(b3)) > before ? true : undefined),
      "the refused test published again",
    );
  });

  it("never refuses taking over a lapsed lease, even over the project's share", async () => {
    const a = await seedRunsProject(stack);
    const b = await seedRunsProject(stack);
    const [a1, a2, a3] = await startPlan(a);
    await claim(a1);
    await claim(a2);
    // a2's executor went away: its lease lapsed, so A holds one live lease (a1), its whole share.
    await stack.db.query(
      "update runs.test_results set lease_expires_at = now() - interval '1 second' where id = $1",
      [a2],
    );
    await startPlan(b);
    await refused(a3);

    const takenOver = await claim(a2);
    expect(takenOver).to.include({ testResultId: a2, attempt: 2 });
    expect(await statusOf(a, a2)).to.include({ status: TestStatus.RUNNING, attempt: 2 });
  });

  it("keeps a test deferred again and again QUEUED past the dispatch deadline, published again each interval", async () => {
    const a = await seedRunsProject(stack);
    const b = await seedRunsProject(stack);
    const [a1, a2] = await startPlan(a);
    await claim(a1);
    await startPlan(b);
    // Queued for an hour (the dispatch deadline is 15 minutes) and published often (back-off at its
    // cap, 64 intervals): neither may make the deferred test wait longer or give it up, since the
    // project's backlog is what holds it back, not a lack of executors.
    await stack.db.query(
      "update runs.test_results set queued_at = now() - interval '1 hour', publish_count = 20 where id = $1",
      [a2],
    );
    for (let round = 1; round <= 3; round++) {
      await refused(a2);
      const before = await publications(a2);
      await eventually(
        async () => ((await publications(a2)) > before ? true : undefined),
        `the deferred test published again (round ${round})`,
      );
      expect(await statusOf(a, a2)).to.include({ status: TestStatus.QUEUED, attempt: 0 });
    }
  });

  it("serialises one project's claims, so two at once cannot both take the last slot of its share", async () => {
    const a = await seedRunsProject(stack);
    const b = await seedRunsProject(stack);
    // Tests of two runs: their claims lock different run rows, so only the project's lock orders them.
    const [first] = await startPlan(a);
    const [second] = await startPlan(a);
    await startPlan(b);

    const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select pg_advisory_xact_lock(hashtext($1))", [claimLockKey(a.projectId)]);
      const claims = Promise.allSettled([claim(first), claim(second)]);
      await eventually(async () => {
        const { rows } = await holder.query<{ waiting: number }>(
          `select count(*)::int as waiting from pg_locks
           where locktype = 'advisory' and not granted
             and database = (select oid from pg_database where datname = current_database())`,
        );
        return rows[0]?.waiting === 2 ? true : undefined;
      }, "both claims waiting for the project's lock");
      await holder.query("commit");

      const outcomes = await claims;
      expect(outcomes.filter((o) => o.status === "fulfilled")).to.have.length(1);
      const [refusal] = outcomes.filter((o) => o.status === "rejected");
      expect(String((refusal as PromiseRejectedResult).reason)).to.match(/resource_exhausted/);
    } finally {
      await holder.end();
    }
  });
});
