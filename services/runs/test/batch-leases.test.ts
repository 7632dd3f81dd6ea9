// The per-test path of issue 38: ClaimTests (several claims in one call, fair claiming counted
// within the batch), HeartbeatLeases (one call extends every lease of an executor; a dead
// executor's leases lapse), and a run's counters kept by the statements that change its tests.
import { Code } from "@connectrpc/connect";
import { RunStatus, type TestAssignment, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  eventually,
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

describe("batched claims, per-executor heartbeats and run counters", () => {
  let stack: InProcessRunsStack;
  before(async () => {
    stack = await startInProcessRunsStack({
      MAX_RUNNING_PER_PROJECT: "2",
      LEASE_MS: "1000",
      MAX_ATTEMPTS: "3",
    });
  });
  after(async () => {
    await stack?.stop();
  });

  // Each case cancels the runs it started, so that their QUEUED tests do not make a later case's
  // projects wait (fair claiming looks at every project).
  const started: { projectId: string; runId: string }[] = [];
  afterEach(async () => {
    for (const { projectId, runId } of started.splice(0))
      await stack.runs.cancelRun({ actor: operator(), projectId, runId });
  });

  const startRun = async (project: RunsProject, testCaseIds = project.cases) => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: testCaseIds } },
    });
    started.push({ projectId: project.projectId, runId: run?.id ?? "" });
    return { runId: run?.id ?? "", tests: (run?.tests ?? []).map((t) => t.id) };
  };
  const claimTests = (ids: string[], executor = "pod-a") =>
    stack.executor.claimTests({
      claims: ids.map((testResultId, slot) => ({ testResultId, executorId: `${executor}/${slot}` })),
    });
  const leaseRows = async (ids: string[]) =>
    (
      await stack.db.query<{ id: string; status: string; lease_owner: string; lease_expires_at: Date }>(
        "select id, status, lease_owner, lease_expires_at from runs.test_results where id = any($1) order by id",
        [ids],
      )
    ).rows;

  it("claims a batch in one call, each test under a lease of its own, in the order asked and no more", async () => {
    const project = await seedRunsProject(stack);
    const [t1, t2, t3] = (await startRun(project)).tests as [string, string, string];
    const { outcomes } = await claimTests([t3, t1]);
    expect(outcomes.map((o) => o.testResultId)).to.deep.equal([t3, t1]);
    const assignments = outcomes.map((o) => o.assignment) as TestAssignment[];
    expect(assignments.map((a) => a?.testResultId)).to.deep.equal([t3, t1]);
    expect(assignments.map((a) => a?.attempt)).to.deep.equal([1, 1]);
    expect(new Set(assignments.map((a) => a.leaseToken)).size).to.equal(2);
    for (const a of assignments) {
      expect(a.leaseToken).to.have.length.greaterThan(10);
      expect(a.variablesGrant).to.not.equal("");
      expect(Number(a.leaseExpiresAt?.seconds) * 1000).to.be.greaterThan(Date.now() - 5_000);
    }
    const rows = await leaseRows([t1, t2, t3]);
    expect(Object.fromEntries(rows.map((r) => [r.id, [r.status, r.lease_owner]]))).to.deep.equal({
      [t1]: ["running", "pod-a/1"],
      [t2]: ["queued", null],
      [t3]: ["running", "pod-a/0"],
    });

    // Per claim, what ClaimTest would have answered; the others are claimed all the same.
    const again = await claimTests([t1, "tr_unknown", t2], "pod-b");
    expect(
      again.outcomes.map((o) => [o.testResultId, o.code, o.message, o.assignment?.attempt]),
    ).to.deep.equal([
      [t1, Code.Aborted, "another executor holds the lease on this test", undefined],
      ["tr_unknown", Code.NotFound, "no such test result", undefined],
      [t2, 0, "", 1],
    ]);

    await rejects(stack.executor.claimTests({ claims: [] }), Code.InvalidArgument);
    await rejects(claimTests([t1, t1]), Code.InvalidArgument);
    await rejects(claimTests(Array.from({ length: 101 }, (_, i) => `tr_${i}`)), Code.InvalidArgument);
    await rejects(
      stack.executor.claimTests({ claims: [{ testResultId: t1, executorId: "" }] }),
      Code.InvalidArgument,
    );
    await rejects(
      stack.runs.claimTests({ claims: [{ testResultId: t1, executorId: "x" }] }),
      Code.PermissionDenied,
    );
  });

  it("holds a project to its share within one batch while another project waits, and lets a lone one take every slot", async () => {
    const a = await seedRunsProject(stack);
    const b = await seedRunsProject(stack);
    const [a1, a2, a3] = (await startRun(a)).tests as [string, string, string];
    const [b1] = (await startRun(b)).tests as [string];
    const { outcomes } = await claimTests([a1, a2, a3, b1]);
    expect(outcomes.map((o) => [o.testResultId, o.code, o.assignment ? "claimed" : "refused"])).to.deep.equal(
      [
        [a1, 0, "claimed"],
        [a2, 0, "claimed"],
        [a3, Code.ResourceExhausted, "refused"],
        [b1, 0, "claimed"],
      ],
    );
    expect((await leaseRows([a3]))[0]?.status).to.equal("queued");

    // Alone (the other runs cancelled), a project takes more than its share in one batch.
    for (const { projectId, runId } of started.splice(0))
      await stack.runs.cancelRun({ actor: operator(), projectId, runId });
    const c = await seedRunsProject(stack);
    const tests = (await startRun(c)).tests;
    const lone = await claimTests(tests);
    expect(lone.outcomes.map((o) => o.assignment?.attempt)).to.deep.equal([1, 1, 1]);
  });

  it("extends every lease of an executor in one call, tells which are lost, and lets a dead executor's leases lapse", async () => {
    const project = await seedRunsProject(stack);
    const tests = (await startRun(project)).tests as [string, string, string];
    const assignments = (await claimTests(tests)).outcomes.map((o) => o.assignment) as TestAssignment[];
    const before = await leaseRows(tests);
    const beat = await stack.executor.heartbeatLeases({ leases: assignments.map(leaseOf) });
    expect(beat.lost).to.deep.equal([]);
    const after = await leaseRows(tests);
    for (const [i, row] of after.entries())
      expect(row.lease_expires_at.getTime()).to.be.greaterThan(before[i]?.lease_expires_at.getTime() ?? 0);

    // One completed, one named with a token that is not its claim's: both lost, the third extended.
    const [first, second, third] = assignments as [TestAssignment, TestAssignment, TestAssignment];
    await stack.executor.completeTest({
      ...leaseOf(first),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 1n,
    });
    const mixed = await stack.executor.heartbeatLeases({
      leases: [
        leaseOf(first),
        { testResultId: second.testResultId, leaseToken: "not-the-token" },
        leaseOf(third),
      ],
    });
    expect([...mixed.lost].sort()).to.deep.equal([first.testResultId, second.testResultId].sort());

    // The executor dies: no more beats. Its leases lapse and another executor claims the tests again.
    const retaken = new Map<string, TestAssignment>();
    await eventually(async () => {
      const waiting = [second, third].filter((a) => !retaken.has(a.testResultId)).map((a) => a.testResultId);
      for (const { assignment } of (await claimTests(waiting, "pod-b")).outcomes)
        if (assignment) retaken.set(assignment.testResultId, assignment);
      return retaken.size === 2 || undefined;
    }, "the dead executor's leases to lapse");
    expect([...retaken.values()].map((a) => a.attempt)).to.deep.equal([2, 2]);
    const late = await stack.executor.heartbeatLeases({ leases: [leaseOf(second), leaseOf(third)] });
    expect([...late.lost].sort()).to.deep.equal([second.testResultId, third.testResultId].sort());

    await rejects(stack.executor.heartbeatLeases({ leases: [] }), Code.InvalidArgument);
    await rejects(
      stack.executor.heartbeatLeases({ leases: [leaseOf(third), leaseOf(third)] }),
      Code.InvalidArgument,
    );
    // Its bound: 1,000 leases a call pass, the 1,001st is refused (unknown leases are only lost).
    const leases = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ testResultId: `tr_${i}`, leaseToken: "t" }));
    expect((await stack.executor.heartbeatLeases({ leases: leases(1000) })).lost).to.have.length(1000);
    await rejects(stack.executor.heartbeatLeases({ leases: leases(1001) }), Code.InvalidArgument);
  });

  it("keeps a run's counters equal to a recount of its tests through mixed and concurrent outcomes", async () => {
    const project = await seedRunsProject(stack);
    const { catalog } = stack.catalog;
    const extra: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { testCase } = await catalog.createTestCase({
        actor: operator(),
        projectId: project.projectId,
        name: `counted ${i}`,
        tags: [],
        enabled: true,
        steps: [httpStep(`/counted/${i}`)],
      });
      extra.push(testCase?.id ?? "");
    }
    const { runId, tests } = await startRun(project, [...project.cases, ...extra]);
    expect(tests).to.have.length(8);
    const counters = async () =>
      (
        await stack.db.query(
          `select r.passed_tests, r.failed_tests, r.skipped_tests, r.refundable_tests, r.no_executor_tests,
             (select json_build_object(
                'passed_tests', count(*) filter (where status = 'passed'),
                'failed_tests', count(*) filter (where status = 'failed'),
                'skipped_tests', count(*) filter (where status = 'skipped'),
                'refundable_tests', count(*) filter (where refundable),
                'no_executor_tests', count(*) filter (where skip_reason = 'no_executor'))
              from runs.test_results where run_id = r.id) as recount
           from runs.runs r where r.id = $1`,
          [runId],
        )
      ).rows[0] as Record<string, number> & { recount: Record<string, number> };
    const expectRecount = async () => {
      const { recount, ...kept } = await counters();
      expect(kept).to.deep.equal(recount);
      return kept;
    };

    // Six claimed in one batch (a lone project), two left QUEUED.
    const assignments = (await claimTests(tests.slice(0, 6))).outcomes.map(
      (o) => o.assignment,
    ) as TestAssignment[];
    const [p1, p2, f1, s1, r1, running] = assignments as [
      TestAssignment,
      TestAssignment,
      TestAssignment,
      TestAssignment,
      TestAssignment,
      TestAssignment,
    ];
    const complete = (a: TestAssignment, status: TestStatus) =>
      stack.executor.completeTest({
        ...leaseOf(a),
        status,
        summary: status === TestStatus.FAILED ? "expected 200, got 500" : "",
        durationMs: 3n,
        ...(status === TestStatus.FAILED && {
          failedStep: 1,
          stepResults: [{ number: 1, status: TestStatus.FAILED, durationMs: 2n }],
        }),
      });
    // Concurrent completions of one run, and a hand-back among them.
    await Promise.all([
      complete(p1, TestStatus.PASSED),
      complete(p2, TestStatus.PASSED),
      complete(f1, TestStatus.FAILED),
      complete(s1, TestStatus.SKIPPED),
      stack.executor.releaseTest({ ...leaseOf(r1), reason: "shutting down" }),
    ]);
    // A repeated report changes no counter.
    await complete(p1, TestStatus.PASSED);
    expect(await expectRecount()).to.deep.equal({
      passed_tests: 2,
      failed_tests: 1,
      skipped_tests: 1,
      refundable_tests: 0,
      no_executor_tests: 0,
    });
    expect(running.testResultId).to.not.equal("");

    // Cancelled: the running test and the three QUEUED ones skipped, the QUEUED ones refundable.
    await stack.runs.cancelRun({ actor: operator(), projectId: project.projectId, runId });
    expect(await expectRecount()).to.deep.equal({
      passed_tests: 2,
      failed_tests: 1,
      skipped_tests: 5,
      refundable_tests: 3,
      no_executor_tests: 0,
    });
    const { run } = await stack.runs.getRun({ actor: operator(), projectId: project.projectId, runId });
    expect(run?.status).to.equal(RunStatus.FAILED);
    expect(run?.finished).to.equal(true);
    const [refund] = (
      await stack.db.query<{ refund_due: number }>("select refund_due from runs.runs where id = $1", [runId])
    ).rows;
    expect(refund?.refund_due).to.equal(3);
  });
});
