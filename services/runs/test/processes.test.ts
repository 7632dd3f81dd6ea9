// The runs service where what is tested crosses processes, with catalog, billing and runs each a
// real process (`startRunsProcessStack`): a replica whose link to billing holds every byte (a
// charge on its way, neither lost nor arrived), and a grpc-js client built from the .proto files
// over the socket of the runs service started as in production. Everything else about the runs
// service is tested in-process (`startInProcessRunsStack` of @testrun/testing; docs/development.md, "Tests").
import { Code, ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import {
  balanceOf,
  eventually,
  operator,
  quickReconciler,
  type RunsProcessStack,
  type RunsProject,
  rejects,
  replicaWithHeldBilling,
  repoRoot,
  seedRunsProject,
  startRunsProcessStack,
} from "@testrun/testing";
import { expect } from "chai";

describe("runs service across processes: a held link to billing, a grpc-js client", () => {
  let stack: RunsProcessStack;
  let project: RunsProject;

  before(async () => {
    stack = await startRunsProcessStack();
  });
  beforeEach(async () => {
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  it("undoes a start whose caller stopped waiting before the charge was confirmed: no run, no credit taken", async () => {
    // A runs replica whose link to billing holds every byte until released: its charge is on the
    // way when the caller's deadline passes. The reconciler's grace (60 s) is not what undoes it.
    // The deadline leaves a freshly started replica time to reach the charge even on a busy machine.
    const { link, client: impatient, stop } = await replicaWithHeldBilling(stack, 3_000);
    try {
      const before = await balanceOf(stack, project.projectId);
      const outcome = await impatient
        .startRun({
          actor: project.key,
          projectId: project.projectId,
          selection: { case: "testPlan", value: project.planId },
        })
        .then(
          () => "started",
          (error: unknown) => Code[ConnectError.from(error).code],
        );
      expect(outcome).to.equal("DeadlineExceeded");
      // The start got as far as the charge (stored, held back from billing), so what follows is
      // the undo of a start under way, not of one that never began.
      const { rows: stalled } = await stack.db.query<{ charge_state: string }>(
        "select charge_state from runs.runs where project_id = $1",
        [project.projectId],
      );
      expect(stalled.map((r) => r.charge_state))
        .to.have.length(1)
        .and.not.include("charged");

      // The charge and the refund now reach billing; whatever landed is given back and the
      // pending run removed, so a client that posts again pays once.
      link.release();
      await eventually(async () => {
        const { rows } = await stack.db.query("select 1 from runs.runs where project_id = $1", [
          project.projectId,
        ]);
        return rows.length === 0 ? true : undefined;
      }, "the start to be undone");
      expect(await balanceOf(stack, project.projectId)).to.equal(before);
      const { entries } = await stack.billing.listLedger({ actor: operator(), projectId: project.projectId });
      expect(entries.reduce((sum, e) => sum + e.amount, 0n)).to.equal(before);
    } finally {
      await stop();
    }
  });

  it("serves a grpc-js client built from the .proto files: StartRun then GetRun", async () => {
    const definition = protoLoader.loadSync("testrun/runs/v1/runs.proto", {
      includeDirs: [`${repoRoot}proto`],
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      testrun: { runs: { v1: { RunsService: grpc.ServiceClientConstructor } } };
    };
    const client = new loaded.testrun.runs.v1.RunsService(
      new URL(stack.runsProcess.url).host,
      grpc.credentials.createInsecure(),
    );
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${stack.env.SERVICE_TOKEN}`);
    type Answer = { run: { id: string; status: string; finished: boolean; tests: { status: string }[] } };
    const call = (method: string, request: object) =>
      new Promise<Answer>((resolve, reject) =>
        (client as unknown as Record<string, (...args: unknown[]) => void>)[method]?.(
          request,
          metadata,
          (error: grpc.ServiceError | null, response: Answer) => (error ? reject(error) : resolve(response)),
        ),
      );
    try {
      const actor = { operator: { name: "grpc-js" } };
      const started = await call("StartRun", {
        actor,
        projectId: project.projectId,
        testPlan: project.planId,
      });
      expect(started.run.status).to.equal("RUN_STATUS_RUNNING");
      expect(started.run.finished).to.equal(false);
      expect(started.run.tests.map((t) => t.status)).to.deep.equal(Array(3).fill("TEST_STATUS_QUEUED"));
      const read = await call("GetRun", { actor, projectId: project.projectId, runId: started.run.id });
      expect(read.run.id).to.equal(started.run.id);
      expect(read.run.tests).to.have.length(3);
    } finally {
      client.close();
    }
  });
});

describe("runs reconciler across processes: a charge that arrives late", () => {
  let stack: RunsProcessStack;
  let project: RunsProject;

  before(async () => {
    // The reconciler gives up a start still pending after START_GRACE_MS.
    stack = await startRunsProcessStack(quickReconciler);
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  it("refuses a charge that reaches billing after the start was given up, so no credit is taken", async () => {
    // A second runs replica whose link to billing holds every byte until released: its start's
    // charge is on its way while this stack's replica gives the start up (START_GRACE_MS).
    const { link, client: replica, stop } = await replicaWithHeldBilling(stack, 30_000);
    try {
      const before = await balanceOf(stack, project.projectId);
      const starting = replica.startRun({
        actor: project.key,
        projectId: project.projectId,
        selection: { case: "testPlan", value: project.planId },
      });
      const outcome = starting.then(
        () => "started",
        (error: unknown) => Code[ConnectError.from(error).code],
      );
      const runId = await eventually(async () => {
        const { rows } = await stack.db.query<{ id: string }>(
          "select id from runs.runs where project_id = $1 and charge_state <> 'charged'",
          [project.projectId],
        );
        return rows[0]?.id;
      }, "the start to be stored as pending");
      await eventually(async () => {
        const left = await stack.db.query("select 1 from runs.runs where id = $1", [runId]);
        return left.rowCount === 0 ? true : undefined;
      }, "the reconciler to give the start up");

      link.release();
      expect(await outcome).to.equal("Unavailable");
      expect(await balanceOf(stack, project.projectId)).to.equal(before);
      const { entries } = await stack.billing.listLedger({
        actor: operator(),
        projectId: project.projectId,
        runId,
      });
      expect(entries).to.deep.equal([]);
      // The late charge itself, repeated: still refused, still nothing taken.
      await rejects(
        stack.billing.chargeRun({ projectId: project.projectId, runId, amount: 3n }),
        Code.Aborted,
      );
      expect(await balanceOf(stack, project.projectId)).to.equal(before);
    } finally {
      await stop();
    }
  });
});
