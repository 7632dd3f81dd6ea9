// A key stops at once, on every endpoint, when its creator loses the rights it acts with
// (docs/rest-api.md, "Authentication"), also while the keys service has not been told: here the
// catalog cannot reach the keys service, so its notification stays queued, the keys service and the
// gateway's key cache still take the key for valid, and only the services that ask the catalog on
// every call can refuse it. Through the real gateway, every service a real process.

import { Code, ConnectError } from "@connectrpc/connect";
import { addMember, changeMemberRole, createCliContext, createKey, removeMember } from "@testrun/cli";
import { CatalogService, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { serviceClient } from "@testrun/kit";
import { expect } from "chai";
import pg from "pg";
import type { System } from "../scripts/system.js";
import { type Answer, addCases, getCase, newProject, Pipeline, startTestSystem } from "./pipeline.js";

/** What every endpoint answers for such a key (and the gateway itself, once the keys service knows). */
const lostRights =
  "the key's creator is no longer an Editor or above, so the key no longer works; create a new key";

describe("a key whose creator lost rights, the keys service not yet told, through the gateway", function () {
  this.timeout(60_000);
  let system: System;
  let db: pg.Client;
  let organizationId: string;
  let projectId: string;
  let runId: string;

  const ctx = () => createCliContext(system.env);
  const expectRefused = (answer: Answer, message = lostRights) => {
    expect(answer.status, JSON.stringify(answer.body)).to.equal(403);
    expect(answer.body).to.deep.include({ code: "forbidden", error: message });
  };

  before(async () => {
    // Nothing listens on port 1: the catalog's notifications to the keys service stay queued.
    system = await startTestSystem({ serviceEnv: { catalog: { KEYS_URL: "http://127.0.0.1:1" } } });
    db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    const owner = await newProject(system, "lost rights", { credits: 10 });
    projectId = owner.projectId;
    const project = await db.query("select organization_id from catalog.projects where id = $1", [projectId]);
    organizationId = String(project.rows[0]?.organization_id);
    await addCases(system, projectId, getCase("health", "health", "/health"));
    runId = (await owner.pipeline.start({ tags: ["health"] })).id;
  });
  after(async () => {
    await db?.end();
    await system?.stop();
  });

  /** A key of a new Editor, used once on each read, so that the gateway's cache holds it as valid. */
  const editorKey = async (name: string) => {
    const editor = await addMember(ctx(), {
      organizationId,
      email: `${name}@lost-rights.example`,
      displayName: name,
      role: Role.EDITOR,
    });
    const { secret } = await createKey(ctx(), { projectId, name, creatorMemberId: editor.id });
    const pipeline = new Pipeline(system.gatewayUrl, secret);
    for (const path of [`/v1/runs/${runId}`, "/v1/runs", `/v1/runs/${runId}?wait=1`, "/v1/environments"]) {
      const answer = await pipeline.call("GET", path);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).to.equal(200);
    }
    return { memberId: editor.id, pipeline };
  };

  /** Every read of runs and of the catalog, and a rerun, refused; the keys service still unaware. */
  const expectStopped = async (memberId: string, pipeline: Pipeline) => {
    const queued = await db.query("select 1 from catalog.key_notifications where member_id = $1", [memberId]);
    expect(queued.rowCount, "the keys service was not told").to.equal(1);
    expectRefused(await pipeline.call("GET", `/v1/runs/${runId}`));
    expectRefused(await pipeline.call("GET", "/v1/runs"));
    expectRefused(await pipeline.call("GET", `/v1/runs/${runId}?wait=1`));
    expectRefused(await pipeline.call("GET", "/v1/environments"));
    expectRefused(
      await pipeline.call("POST", `/v1/runs/${runId}/rerun`, {}),
      "the key's creator can no longer start runs",
    );
  };

  it("answers 403 on every read once the creator is removed from the organization", async () => {
    const { memberId, pipeline } = await editorKey("removed");
    await removeMember(ctx(), { memberId });
    await expectStopped(memberId, pipeline);
  });

  it("answers 403 on every read once the creator is made Viewer", async () => {
    const { memberId, pipeline } = await editorKey("demoted");
    await changeMemberRole(ctx(), { memberId, role: Role.VIEWER });
    await expectStopped(memberId, pipeline);
  });

  /**
   * A new Viewer's GetRun of the shared run, straight to the runs service, granted three times (so
   * the runs service keeps the grant, kit AccessCache); then `change`, and the code of the next
   * read's refusal. The cached grant must not outlive the change.
   */
  const viewerReadAfter = async (name: string, change: (viewerId: string) => Promise<unknown>) => {
    const viewer = await addMember(ctx(), {
      organizationId,
      email: `${name}@lost-rights.example`,
      displayName: name,
      role: Role.VIEWER,
    });
    const runs = serviceClient(RunsService, system.env.RUNS_URL ?? "", {
      token: system.env.SERVICE_TOKEN ?? "",
    });
    const read = () =>
      runs.getRun({ actor: { kind: { case: "memberId", value: viewer.id } }, projectId, runId });
    for (let i = 0; i < 3; i++) expect((await read()).run?.id).to.equal(runId);
    await change(viewer.id);
    const refused = await read().then(
      () => undefined,
      (error: unknown) => ConnectError.from(error),
    );
    return refused?.code;
  };

  // A member's loss of rights kills no key: the catalog's new access epoch alone ends the grant.
  it("refuses a removed Viewer's next read of a run at once, though the same read was just granted", async () => {
    expect(await viewerReadAfter("viewer", (memberId) => removeMember(ctx(), { memberId }))).to.equal(
      Code.PermissionDenied,
    );
  });

  // Last: it deletes the project the tests above share.
  it("refuses a member's next read of a run at once once the project is deleted", async () => {
    const catalog = serviceClient(CatalogService, system.env.CATALOG_URL ?? "", {
      token: system.env.SERVICE_TOKEN ?? "",
    });
    const operator = { kind: { case: "operator" as const, value: { name: "test" } } };
    expect(
      await viewerReadAfter("reader", () => catalog.deleteProject({ actor: operator, projectId })),
    ).to.equal(Code.NotFound);
  });
});
