import { Code } from "@connectrpc/connect";
import type { TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import {
  type Catalog,
  httpStep,
  type InProcessCatalog,
  member,
  newProject,
  rejects,
  seedOrganization,
  startInProcessCatalog,
  unique,
} from "@testrun/testing";
import { expect } from "chai";

// Retries by policy (catalog.proto TestCase.retries, TestPlan.retries): stored, versioned,
// bounded, imported, and resolved for a run with the plan's over the test case's.

describe("catalog: retries of test cases and plans", () => {
  let h: InProcessCatalog;
  let catalog: Catalog;
  let seed: Awaited<ReturnType<typeof seedOrganization>>;
  let editor: Actor;
  let projectId: string;

  before(async () => {
    h = await startInProcessCatalog();
    catalog = h.catalog;
    seed = await seedOrganization(catalog);
    editor = member(seed.members.editor);
    projectId = await newProject(catalog, seed.orgId);
    await catalog.createEnvironment({
      actor: editor,
      projectId,
      name: "staging",
      baseUrl: "https://shop.test",
    });
  });
  after(async () => {
    await h.stop();
  });

  const newCase = async (retries?: number, tags = ["r"]) =>
    (
      await catalog.createTestCase({
        actor: editor,
        projectId,
        name: unique("case"),
        tags,
        steps: [httpStep()],
        ...(retries !== undefined && { retries }),
      })
    ).testCase as TestCase;
  const newPlan = async (testCaseIds: string[], retries?: number) =>
    (
      await catalog.createTestPlan({
        actor: editor,
        projectId,
        name: unique("plan"),
        description: "",
        testCaseIds,
        ...(retries !== undefined && { retries }),
      })
    ).testPlan as TestPlan;
  /** The INVALID_ARGUMENT of a call, as its message and its violations (`field: description`). */
  const refused = async (call: Promise<unknown>) => {
    const error = await rejects(call, Code.InvalidArgument);
    return {
      message: error.rawMessage,
      violations: error
        .findDetails(FieldViolationsSchema)
        .flatMap((d) => d.violations.map((v) => `${v.field}: ${v.description}`)),
    };
  };
  const resolved = async (selection: Parameters<Catalog["resolveRunSelection"]>[0]["selection"]) =>
    (await catalog.resolveRunSelection({ actor: editor, projectId, selection })).testCases.map((c) => [
      c.testCaseId,
      c.retries,
    ]);

  it("test cases: default 0, set at creation, changed as a new version that keeps the old one's, listed", async () => {
    expect((await newCase()).retries, "unset means 0").to.equal(0);
    const created = await newCase(2);
    expect(created).to.include({ retries: 2, version: 1 });

    const renamed = await catalog.updateTestCase({
      actor: editor,
      projectId,
      testCaseId: created.id,
      name: "x",
    });
    expect(renamed.testCase, "another field's change keeps it").to.include({ retries: 2, version: 2 });
    const same = await catalog.updateTestCase({
      actor: editor,
      projectId,
      testCaseId: created.id,
      retries: 2,
    });
    expect(same.testCase, "setting what it is stores nothing").to.include({ retries: 2, version: 2 });
    const changed = await catalog.updateTestCase({
      actor: editor,
      projectId,
      testCaseId: created.id,
      retries: 0,
      expectedVersion: 2,
    });
    expect(changed.testCase).to.include({ retries: 0, version: 3 });

    const at = async (version?: number) =>
      (await catalog.getTestCase({ actor: editor, projectId, testCaseId: created.id, version })).testCase;
    expect((await at(2))?.retries).to.equal(2);
    expect((await at(3))?.retries).to.equal(0);
    expect((await at())?.retries).to.equal(0);
    const listed = await catalog.listTestCases({ actor: editor, projectId, testCaseIds: [created.id] });
    expect(listed.testCases.map((t) => t.retries)).to.deep.equal([0]);
  });

  it("test cases: a count outside 0 to 3 is refused, naming the field and the bound, and nothing is written", async () => {
    for (const retries of [4, -1]) {
      const { violations } = await refused(
        catalog.createTestCase({
          actor: editor,
          projectId,
          name: "bad",
          tags: [],
          steps: [httpStep()],
          retries,
        }),
      );
      expect(violations).to.deep.equal([
        `retries: must be 0 to 3, how many times a failed attempt is run again (got ${retries})`,
      ]);
    }
    const kept = await newCase(1);
    const { violations } = await refused(
      catalog.updateTestCase({ actor: editor, projectId, testCaseId: kept.id, retries: 7 }),
    );
    expect(violations).to.deep.equal([
      "retries: must be 0 to 3, how many times a failed attempt is run again (got 7)",
    ]);
    const after = await catalog.getTestCase({ actor: editor, projectId, testCaseId: kept.id });
    expect(after.testCase).to.include({ retries: 1, version: 1 });
  });

  it("test plans: unset unless given; set (0 included), changed, cleared, each a new version; bounds refused", async () => {
    const a = await newCase();
    const none = await newPlan([a.id]);
    expect(none.retries, "unset: the plan sets none").to.equal(undefined);
    const zero = await newPlan([a.id], 0);
    expect(zero.retries, "0 is a setting of its own").to.equal(0);

    const plan = await newPlan([a.id], 3);
    expect(plan).to.include({ retries: 3, version: 1 });
    const update = (retries: { retries?: number } | undefined, expectedVersion?: number) =>
      catalog.updateTestPlan({ actor: editor, projectId, testPlanId: plan.id, retries, expectedVersion });
    expect((await update(undefined)).testPlan, "unset keeps them").to.include({ retries: 3, version: 1 });
    expect((await update({ retries: 3 })).testPlan, "the same stores nothing").to.include({ version: 1 });
    expect((await update({ retries: 1 }, 1)).testPlan).to.include({ retries: 1, version: 2 });
    const cleared = (await update({}, 2)).testPlan as TestPlan;
    expect([cleared.retries, cleared.version], "PlanRetries without a value clears").to.deep.equal([
      undefined,
      3,
    ]);

    const at = async (version: number) =>
      (await catalog.getTestPlan({ actor: editor, projectId, testPlanId: plan.id, version })).testPlan
        ?.retries;
    expect([await at(1), await at(2), await at(3)], "each version keeps its own").to.deep.equal([
      3,
      1,
      undefined,
    ]);
    const { testPlans } = await catalog.listTestPlans({ actor: editor, projectId });
    expect(testPlans.find((p) => p.id === plan.id)?.retries).to.equal(undefined);

    const bad = await refused(
      catalog.createTestPlan({
        actor: editor,
        projectId,
        name: "bad",
        description: "",
        testCaseIds: [],
        retries: 4,
      }),
    );
    expect(bad.violations).to.deep.equal([
      "retries: must be 0 to 3, how many times a failed attempt is run again (got 4)",
    ]);
    const badUpdate = await refused(update({ retries: -1 }));
    expect(badUpdate.violations).to.deep.equal([
      "retries.retries: must be 0 to 3, how many times a failed attempt is run again (got -1)",
    ]);
    expect(
      (await catalog.getTestPlan({ actor: editor, projectId, testPlanId: plan.id })).testPlan,
    ).to.include({
      version: 3,
    });
  });

  it("ResolveRunSelection: a plan's retries (0 included) replace each case's; without them, or by ids or tags, each case's own", async () => {
    const tag = unique("t").replaceAll(" ", "-");
    const one = await newCase(1, [tag]);
    const three = await newCase(3, [tag]);
    const byCase = await newPlan([one.id, three.id]);
    const byPlan = await newPlan([one.id, three.id], 2);
    const none = await newPlan([one.id, three.id], 0);

    expect(await resolved({ case: "testPlan", value: byCase.id })).to.deep.equal([
      [one.id, 1],
      [three.id, 3],
    ]);
    expect(await resolved({ case: "testPlan", value: byPlan.id })).to.deep.equal([
      [one.id, 2],
      [three.id, 2],
    ]);
    expect(await resolved({ case: "testPlan", value: none.id })).to.deep.equal([
      [one.id, 0],
      [three.id, 0],
    ]);
    expect(await resolved({ case: "testCaseIds", value: { ids: [three.id, one.id] } })).to.deep.equal([
      [three.id, 3],
      [one.id, 1],
    ]);
    expect(await resolved({ case: "tags", value: { tags: [tag] } })).to.deep.equal([
      [one.id, 1],
      [three.id, 3],
    ]);
  });

  it("ImportContent: a document's retries replace the project's, a change is named, an absent plan's clears", async () => {
    const project = await newProject(catalog, seed.orgId);
    const first = await catalog.importContent({
      actor: editor,
      projectId: project,
      testCases: [{ name: "login", steps: [httpStep()], retries: 2 }],
      testPlans: [{ name: "smoke", description: "", testCases: ["login"], retries: 1 }],
    });
    const { testCases } = await catalog.listTestCases({ actor: editor, projectId: project });
    const { testPlans } = await catalog.listTestPlans({ actor: editor, projectId: project });
    expect(testCases.map((t) => t.retries)).to.deep.equal([2]);
    expect(testPlans.map((p) => p.retries)).to.deep.equal([1]);

    const again = await catalog.importContent({
      actor: editor,
      projectId: project,
      testCases: [{ id: first.testCases[0]?.id, name: "login", steps: [httpStep()], retries: 3 }],
      testPlans: [{ id: first.testPlans[0]?.id, name: "smoke", description: "", testCases: ["login"] }],
    });
    expect(again.testCases.map((i) => i.changedFields)).to.deep.equal([["retries"]]);
    expect(again.testPlans.map((i) => i.changedFields)).to.deep.equal([["retries"]]);
    const plan = (await catalog.listTestPlans({ actor: editor, projectId: project })).testPlans[0];
    expect([plan?.retries, plan?.version]).to.deep.equal([undefined, 2]);
    const testCase = (await catalog.listTestCases({ actor: editor, projectId: project })).testCases[0];
    expect([testCase?.retries, testCase?.version]).to.deep.equal([3, 2]);

    const badCase = await refused(
      catalog.importContent({
        actor: editor,
        projectId: project,
        testCases: [{ name: "other", steps: [httpStep()], retries: 9 }],
        dryRun: true,
      }),
    );
    expect(badCase.violations).to.deep.equal([
      "test_cases[0].retries: must be 0 to 3, how many times a failed attempt is run again (got 9)",
    ]);
  });
});
