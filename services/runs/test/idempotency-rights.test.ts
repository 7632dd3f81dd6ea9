import { Code } from "@connectrpc/connect";
import {
  member,
  type RunsProcessStack,
  type RunsProject,
  rejects,
  seedRunsProject,
  startRunsProcessStack,
} from "@testrun/testing";
import { expect } from "chai";

// StartRunRequest.idempotency_key hands back the run an earlier start made: only to someone who
// may start runs in that project (found by an outsider review). A repeat is a start, so it is
// authorized as one; otherwise a key names another project's run, or a Viewer's call reads one.
describe("runs service: an idempotent repeat is authorized as a start", () => {
  let stack: RunsProcessStack;
  let project: RunsProject;
  let other: RunsProject;

  before(async () => {
    stack = await startRunsProcessStack();
    project = await seedRunsProject(stack);
    other = await seedRunsProject(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  const start = (actorId: string, projectId: string, planId: string, idempotencyKey: string) =>
    stack.runs.startRun({
      actor: member(actorId),
      projectId,
      selection: { case: "testPlan", value: planId },
      idempotencyKey,
    });

  it("refuses a Viewer and a member of another organization the run a key made, and keeps repeats for those who may start", async () => {
    const key = "sch_attack@2026-01-01T00:00:00.000Z";
    const first = (await start(project.members.editor, project.projectId, project.planId, key)).run;
    expect(first?.id).to.match(/^run_/);

    // A Viewer may not start runs: a repeat is no way around that.
    await rejects(
      start(project.members.viewer, project.projectId, project.planId, key),
      Code.PermissionDenied,
    );
    // A member of another organization naming this project and key gets nothing of it.
    const outsider = await start(other.members.editor, project.projectId, project.planId, key).then(
      () => undefined,
      (error: { code: Code }) => error.code,
    );
    expect(outsider).to.be.oneOf([Code.PermissionDenied, Code.NotFound]);

    // Whoever may start gets the same run back; the same key in another project is another run.
    const again = (await start(project.members.admin, project.projectId, project.planId, key)).run;
    expect(again?.id).to.equal(first?.id);
    const elsewhere = (await start(other.members.editor, other.projectId, other.planId, key)).run;
    expect(elsewhere?.id).to.not.equal(first?.id);
    expect(elsewhere?.projectId).to.equal(other.projectId);
  });
});
