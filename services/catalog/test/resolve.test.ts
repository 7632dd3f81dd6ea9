import { type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { httpStepOf } from "@testrun/content-file";
import type { ResolveRunSelectionRequestSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { AmbiguousNameSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import {
  apiKey,
  type Catalog,
  httpStep,
  type InProcessCatalog,
  member,
  operator,
  rejects,
  seedOrganization,
  startInProcessCatalog,
  unique,
} from "@testrun/testing";
import { expect } from "chai";

type Selection = MessageInitShape<typeof ResolveRunSelectionRequestSchema>["selection"];
const plan = (value: string): Selection => ({ case: "testPlan", value });
const ids = (...list: string[]): Selection => ({ case: "testCaseIds", value: { ids: list } });
const tags = (...list: string[]): Selection => ({ case: "tags", value: { tags: list } });

describe("catalog: ResolveRunSelection", () => {
  let h: InProcessCatalog;
  let catalog: Catalog;
  let seed: Awaited<ReturnType<typeof seedOrganization>>;
  let editor: Actor;

  before(async () => {
    h = await startInProcessCatalog();
    catalog = h.catalog;
    seed = await seedOrganization(catalog);
    editor = member(seed.members.editor);
  });
  after(async () => {
    await h.stop();
  });

  /** A project with environments and test cases: a (enabled, smoke), b (disabled, smoke), c (enabled, API). */
  async function project() {
    const projectId =
      (
        await catalog.createProject({
          actor: operator(),
          organizationId: seed.orgId,
          name: unique("p"),
          description: "",
        })
      ).project?.id ?? "";
    const env = async (name: string, isDefault = false) =>
      (
        await catalog.createEnvironment({
          actor: editor,
          projectId,
          name,
          baseUrl: `https://${name}.io`,
          isDefault,
        })
      ).environment?.id ?? "";
    const testCase = async (name: string, tagList: string[], enabled: boolean) =>
      (
        await catalog.createTestCase({
          actor: editor,
          projectId,
          name,
          tags: tagList,
          enabled,
          steps: [httpStep(`/${name}`)],
        })
      ).testCase?.id ?? "";
    const envs = { staging: await env("staging"), prod: await env("Prod", true) };
    const cases = {
      a: await testCase("a", ["smoke"], true),
      b: await testCase("b", ["Smoke"], false),
      c: await testCase("c", ["API"], true),
    };
    const resolve = (selection: Selection, environment?: string, actor = editor) =>
      catalog.resolveRunSelection({ actor, projectId, environment, selection });
    return { projectId, envs, cases, env, testCase, resolve };
  }

  it("runs a plan's enabled test cases in plan order, named after the plan", async () => {
    const p = await project();
    const { testPlan } = await catalog.createTestPlan({
      actor: editor,
      projectId: p.projectId,
      name: "Nightly",
      description: "",
      testCaseIds: [p.cases.c, p.cases.b, p.cases.a],
    });
    for (const value of [testPlan?.id ?? "", "Nightly", "nIGHTLY"]) {
      const resolved = await p.resolve(plan(value));
      expect(resolved.testCases.map((t) => t.testCaseId)).to.deep.equal([p.cases.c, p.cases.a]);
      expect(resolved.testPlanId).to.equal(testPlan?.id);
      expect(resolved.defaultRunName).to.equal("Nightly");
    }
    // Snapshots of the steps come along.
    const resolved = await p.resolve(plan("Nightly"));
    expect(resolved.testCases[0]?.name).to.equal("c");
    const stored = await catalog.getTestCase({
      actor: editor,
      projectId: p.projectId,
      testCaseId: p.cases.c,
    });
    const json = (steps: Parameters<typeof toJson<typeof StepSchema>>[1][] = []) =>
      steps.map((step) => toJson(StepSchema, step));
    expect(json(resolved.testCases[0]?.steps)).to.deep.equal(json(stored.testCase?.steps));
    expect(httpStepOf(resolved.testCases[0]?.steps[0])?.request?.path).to.equal("/c");
  });

  it("runs enabled test cases having any of the tags, ignoring case, oldest first", async () => {
    const p = await project();
    const resolved = await p.resolve(tags("SMOKE", "api", "Smoke", ""));
    expect(resolved.testCases.map((t) => t.testCaseId)).to.deep.equal([p.cases.a, p.cases.c]);
    expect(resolved.testPlanId).to.equal(undefined);
    expect(resolved.defaultRunName).to.equal("tags: SMOKE, api");
  });

  it("runs exactly the test cases named, disabled ones too, each once, in the order given", async () => {
    const p = await project();
    const resolved = await p.resolve(ids(p.cases.b, p.cases.a, p.cases.b, p.cases.c, p.cases.a));
    expect(resolved.testCases.map((t) => t.testCaseId)).to.deep.equal([p.cases.b, p.cases.a, p.cases.c]);
    expect(resolved.defaultRunName).to.equal("3 test cases");
    expect((await p.resolve(ids(p.cases.b, p.cases.b))).defaultRunName).to.equal("1 test case");
  });

  it("picks the environment by id or name (ignoring case, not trimmed), else the default, else the oldest", async () => {
    const p = await project();
    expect((await p.resolve(tags("smoke"))).environment?.id).to.equal(p.envs.prod);
    expect((await p.resolve(tags("smoke"), "")).environment?.id).to.equal(p.envs.prod);
    expect((await p.resolve(tags("smoke"), "STAGING")).environment?.id).to.equal(p.envs.staging);
    expect((await p.resolve(tags("smoke"), p.envs.staging)).environment?.id).to.equal(p.envs.staging);
    const unknown = await rejects(p.resolve(tags("smoke"), " staging"), Code.NotFound);
    expect(unknown.rawMessage).to.equal('no environment with the id or name " staging" in this project');
    await rejects(p.resolve(tags("smoke"), "stag"), Code.NotFound);
    // An id wins over a name equal to it.
    await p.env(p.envs.staging);
    expect((await p.resolve(tags("smoke"), p.envs.staging)).environment?.id).to.equal(p.envs.staging);
    // Without a default: the oldest.
    await catalog.updateEnvironment({
      actor: editor,
      projectId: p.projectId,
      environmentId: p.envs.prod,
      isDefault: false,
    });
    expect((await p.resolve(tags("smoke"))).environment?.id).to.equal(p.envs.staging);
  });

  it("refuses an ambiguous name with ABORTED and the candidates, oldest first", async () => {
    const p = await project();
    const second = await p.env("STAGING");
    const env = await rejects(p.resolve(tags("smoke"), "Staging"), Code.Aborted);
    const [detail] = env.findDetails(AmbiguousNameSchema);
    expect(detail).to.include({ field: "environment", name: "Staging" });
    expect(detail?.candidateIds).to.deep.equal([p.envs.staging, second]);

    const make = async () =>
      (
        await catalog.createTestPlan({
          actor: editor,
          projectId: p.projectId,
          name: "Same",
          description: "",
          testCaseIds: [p.cases.a],
        })
      ).testPlan?.id ?? "";
    const plans = [await make(), await make()];
    const ambiguousPlan = await rejects(p.resolve(plan("same")), Code.Aborted);
    const [planDetail] = ambiguousPlan.findDetails(AmbiguousNameSchema);
    expect(planDetail).to.include({ field: "test_plan", name: "same" });
    expect(planDetail?.candidateIds).to.deep.equal(plans);
    // Their ids still work.
    expect((await p.resolve(plan(plans[1] ?? ""), p.envs.prod)).testPlanId).to.equal(plans[1]);
  });

  it("refuses unknown plans and test cases with NOT_FOUND naming the first unknown id", async () => {
    const p = await project();
    await rejects(p.resolve(plan("nope")), Code.NotFound);
    const error = await rejects(p.resolve(ids(p.cases.a, "tc_first", "tc_second")), Code.NotFound);
    expect(error.rawMessage).to.equal("test case tc_first not found in this project");
  });

  it("needs exactly one selection that is not empty", async () => {
    const p = await project();
    const none = await rejects(p.resolve({ case: undefined }), Code.InvalidArgument);
    expect(none.rawMessage).to.equal("one of test_plan, test_case_ids, tags is required");
    await rejects(p.resolve(plan("")), Code.InvalidArgument);
    await rejects(p.resolve(ids()), Code.InvalidArgument);
    await rejects(p.resolve(tags()), Code.InvalidArgument);
    const blank = await rejects(p.resolve(tags("", "  ")), Code.InvalidArgument);
    expect(blank.rawMessage).to.equal("tags must hold at least one non-empty tag");
  });

  it("refuses more than 500 distinct test case ids, and a selection with nothing to run", async () => {
    const p = await project();
    const many = Array.from({ length: 501 }, (_, i) => `tc_${i}`);
    const tooMany = await rejects(p.resolve(ids(...many)), Code.InvalidArgument);
    expect(tooMany.rawMessage).to.equal("test_case_ids names 501 distinct test cases; at most 500");
    // 501 entries but 500 distinct are fine as far as the count goes (then they are unknown).
    await rejects(p.resolve(ids(...many.slice(0, 500), "tc_0")), Code.NotFound);

    const nothing = await rejects(p.resolve(tags("no-such-tag")), Code.InvalidArgument);
    expect(nothing.rawMessage).to.contain("nothing to run");
    const onlyDisabled = await catalog.createTestPlan({
      actor: editor,
      projectId: p.projectId,
      name: "off",
      description: "",
      testCaseIds: [p.cases.b],
    });
    await rejects(p.resolve(plan(onlyDisabled.testPlan?.id ?? "")), Code.InvalidArgument);
    const empty = await catalog.createTestPlan({
      actor: editor,
      projectId: p.projectId,
      name: "empty",
      description: "",
    });
    await rejects(p.resolve(plan(empty.testPlan?.id ?? "")), Code.InvalidArgument);
  });

  it("checks in the documented order: rights, selection, environment, then what it selects", async () => {
    const p = await project();
    const viewer = member(seed.members.viewer);
    await rejects(p.resolve({ case: undefined }, "nowhere", viewer), Code.PermissionDenied);
    await rejects(p.resolve({ case: undefined }, "nowhere"), Code.InvalidArgument);
    const envFirst = await rejects(p.resolve(plan("no-such-plan"), "nowhere"), Code.NotFound);
    expect(envFirst.rawMessage).to.contain("environment");
    const empty =
      (
        await catalog.createProject({
          actor: operator(),
          organizationId: seed.orgId,
          name: unique("e"),
          description: "",
        })
      ).project?.id ?? "";
    const noEnv = await rejects(
      catalog.resolveRunSelection({ actor: editor, projectId: empty, selection: plan("x") }),
      Code.NotFound,
    );
    expect(noEnv.rawMessage).to.equal("the project has no environment");
  });

  it("works for an API key of the project, and cuts long default names to 200 characters", async () => {
    const p = await project();
    const key = apiKey(seed.members.editor, p.projectId, new Date(Date.now() - 1000));
    const longTag = "t".repeat(64);
    const tagList = Array.from({ length: 5 }, (_, i) => `${i}${longTag.slice(1)}`);
    await p.testCase("long", tagList, true);
    const resolved = await p.resolve(tags(...tagList), undefined, key);
    const name = [...resolved.defaultRunName];
    expect(name).to.have.length(200);
    expect(name.at(-1)).to.equal("…");
    expect(resolved.defaultRunName.startsWith(`tags: ${tagList[0]}, ${tagList[1]}`)).to.equal(true);
  });
});
