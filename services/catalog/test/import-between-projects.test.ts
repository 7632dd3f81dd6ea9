// Content moving between projects, over real gRPC against a real catalog and PostgreSQL: a
// project's export (test cases, plans, environments, variable names; never a value) imports into a
// new project as it is, again without duplicating anything, and back into its own project as
// before; environments are matched by name and the default moves; variables are created without a
// value and named as still to set; every problem of these new items is named at its path.
import { Code } from "@connectrpc/connect";
import { httpStepOf, importItemsOf, readContentDocument, writeContentDocument } from "@testrun/content-file";
import {
  ImportContentResponseSchema,
  type ImportedItem,
  ItemOutcome,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { VariablesGrants } from "@testrun/kit";
import {
  type Catalog,
  httpStep,
  type InProcessCatalog,
  member,
  newProject,
  rejects,
  seedOrganization,
  startInProcessCatalog,
} from "@testrun/testing";
import { expect } from "chai";

/** `[path, outcome, changed fields]` per item. */
const outcomes = (items: readonly ImportedItem[]) =>
  items.map((i) => [i.path, ItemOutcome[i.outcome], i.changedFields.join(",")]);
const allOf = (result: {
  environments: ImportedItem[];
  variables: ImportedItem[];
  testCases: ImportedItem[];
  testPlans: ImportedItem[];
}) => [...result.environments, ...result.variables, ...result.testCases, ...result.testPlans];

describe("catalog: ImportContent between projects (environments, variable names)", () => {
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

  const project = () => newProject(catalog, seed.orgId);
  /** What `testrunctl content export` and the console's Export read, as the document's text. */
  const exportOf = async (projectId: string) => {
    const request = { actor: editor, projectId };
    const { testCases } = await catalog.listTestCases({ ...request, includeSteps: true });
    const { testPlans } = await catalog.listTestPlans(request);
    const { environments } = await catalog.listEnvironments(request);
    const { variables } = await catalog.listVariables(request);
    return writeContentDocument(
      { projectId, environments, variableNames: variables.map((v) => v.name), testCases, testPlans },
      "yaml",
    );
  };
  const importText = (projectId: string, text: string, dryRun = false) =>
    catalog.importContent({
      actor: editor,
      projectId,
      ...importItemsOf(readContentDocument(text, "yaml")),
      dryRun,
    });
  /** Everything a project holds, as read back (values excepted: no RPC returns them). */
  const contentOf = async (projectId: string) => {
    const request = { actor: editor, projectId };
    const { testCases } = await catalog.listTestCases({ ...request, includeSteps: true });
    const { testPlans } = await catalog.listTestPlans(request);
    const { environments } = await catalog.listEnvironments(request);
    const { variables } = await catalog.listVariables(request);
    return { testCases, testPlans, environments, variables };
  };
  const refused = async (call: Promise<unknown>) => {
    const error = await rejects(call, Code.InvalidArgument);
    return {
      message: error.rawMessage,
      violations: error
        .findDetails(FieldViolationsSchema)
        .flatMap((d) => d.violations)
        .map((v) => `${v.field}: ${v.description}`),
      preview: error.findDetails(ImportContentResponseSchema)[0],
    };
  };
  const values = (projectId: string) =>
    h.executor.getVariableValues({
      projectId,
      testResultId: "tr_01jd3k00000000000000000000",
      grant: new VariablesGrants(h.env.SERVICE_TOKEN ?? "").issue(
        { projectId, testResultId: "tr_01jd3k00000000000000000000" },
        60_000,
      ),
    });

  /** Project A: two environments, two variables with values, two test cases and a plan. */
  const projectA = async () => {
    const projectId = await project();
    const request = { actor: editor, projectId };
    await catalog.createEnvironment({ ...request, name: "staging", baseUrl: "https://staging.example.com" });
    await catalog.createEnvironment({
      ...request,
      name: "production",
      baseUrl: "https://shop.example.com",
      isDefault: true,
    });
    const secrets = ["s3cret-token-of-project-a", "demo-password-of-project-a"];
    await catalog.createVariable({ ...request, name: "API_TOKEN", value: secrets[0] ?? "" });
    await catalog.createVariable({ ...request, name: "DEMO_PASSWORD", value: secrets[1] ?? "" });
    const login = await catalog.createTestCase({
      ...request,
      name: "Log in",
      tags: ["smoke"],
      steps: [httpStep("/login?token={{API_TOKEN}}")],
    });
    const health = await catalog.createTestCase({
      ...request,
      name: "Health",
      tags: [],
      steps: [httpStep()],
    });
    await catalog.createTestPlan({
      ...request,
      name: "Smoke",
      description: "before a deploy",
      testCaseIds: [health.testCase?.id ?? "", login.testCase?.id ?? ""],
    });
    return { projectId, secrets };
  };

  it("a project's export imports into a new project as it is, then again without duplicating anything, and back into its own project as before", async () => {
    const a = await projectA();
    const text = await exportOf(a.projectId);
    // Names only: no value of a variable is anywhere in the file.
    for (const secret of a.secrets) expect(text).to.not.contain(secret);
    expect(text).to.match(new RegExp(`^project: ${a.projectId}\\n`));
    expect(text).to.contain("variables:\n  - API_TOKEN\n  - DEMO_PASSWORD\n");

    const b = await project();
    const preview = await importText(b, text, true);
    expect(preview.fromOtherProject).to.equal(true);
    expect(outcomes(allOf(preview))).to.deep.equal([
      ["environments[0]", "CREATED", ""],
      ["environments[1]", "CREATED", ""],
      ["variables[0]", "CREATED", ""],
      ["variables[1]", "CREATED", ""],
      ["testCases[0]", "CREATED", ""],
      ["testCases[1]", "CREATED", ""],
      ["testPlans[0]", "CREATED", ""],
    ]);
    expect(preview.variablesWithoutValue).to.deep.equal(["API_TOKEN", "DEMO_PASSWORD"]);
    const empty = await contentOf(b);
    expect(empty, "a preview writes nothing").to.deep.equal({
      testCases: [],
      testPlans: [],
      environments: [],
      variables: [],
    });

    const applied = await importText(b, text);
    expect([applied.applied, applied.fromOtherProject]).to.deep.equal([true, true]);
    expect(outcomes(allOf(applied))).to.deep.equal(outcomes(allOf(preview)));
    expect(applied.variablesWithoutValue).to.deep.equal(["API_TOKEN", "DEMO_PASSWORD"]);
    const after = await contentOf(b);
    const from = await contentOf(a.projectId);
    // New items of B, like A's: none has an id of A.
    expect(after.testCases.map((c) => [c.name, c.tags, httpStepOf(c.steps[0])?.request?.path])).to.deep.equal(
      from.testCases.map((c) => [c.name, c.tags, httpStepOf(c.steps[0])?.request?.path]),
    );
    const idsOfA = new Set([...from.testCases, ...from.testPlans, ...from.environments].map((i) => i.id));
    expect([...after.testCases, ...after.testPlans, ...after.environments].filter((i) => idsOfA.has(i.id))).to
      .be.empty;
    expect(after.testPlans.map((p) => [p.name, p.description, p.testCaseIds])).to.deep.equal([
      ["Smoke", "before a deploy", [after.testCases[1]?.id, after.testCases[0]?.id]],
    ]);
    expect(after.environments.map((e) => [e.name, e.baseUrl, e.isDefault])).to.deep.equal([
      ["staging", "https://staging.example.com", false],
      ["production", "https://shop.example.com", true],
    ]);
    // The variables are there, without values: an executor reads none of them.
    expect(after.variables.map((v) => [v.name, v.hasValue])).to.deep.equal([
      ["API_TOKEN", false],
      ["DEMO_PASSWORD", false],
    ]);
    expect((await values(b)).values).to.deep.equal({});
    expect((await values(a.projectId)).values).to.deep.equal({
      API_TOKEN: a.secrets[0],
      DEMO_PASSWORD: a.secrets[1],
    });

    // The same file again: every item is now matched by name and like it; nothing is duplicated.
    const again = await importText(b, text);
    expect(allOf(again).map((i) => ItemOutcome[i.outcome])).to.deep.equal(Array(7).fill("UNCHANGED"));
    expect(await contentOf(b), "nothing written").to.deep.equal(after);

    // One value set: it is no longer listed as to set, and the next import leaves it alone.
    const token = after.variables[0];
    await catalog.updateVariable({ actor: editor, projectId: b, variableId: token?.id, value: "b-token" });
    const third = await importText(b, text, true);
    expect(third.variablesWithoutValue).to.deep.equal(["DEMO_PASSWORD"]);
    expect((await values(b)).values).to.deep.equal({ API_TOKEN: "b-token" });

    // Back into A: ids are A's, so everything matches as before, unchanged and unwritten.
    const home = await importText(a.projectId, text);
    expect(home.fromOtherProject).to.equal(false);
    expect(allOf(home).map((i) => ItemOutcome[i.outcome])).to.deep.equal(Array(7).fill("UNCHANGED"));
    expect(home.variablesWithoutValue).to.deep.equal([]);
    expect(await contentOf(a.projectId)).to.deep.equal(from);
  });

  it("in a file of its own project a stale id is still refused; in another project's file a plan may name a test case by that project's id", async () => {
    const a = await projectA();
    const text = await exportOf(a.projectId);
    const { testCases } = await contentOf(a.projectId);
    const login = testCases[0];
    await catalog.deleteTestCase({ actor: editor, projectId: a.projectId, testCaseId: login?.id });
    // A's own file after the test case was deleted there: the id is A's, and gone.
    const stale = await refused(importText(a.projectId, text));
    expect(stale.violations).to.deep.equal([
      `test_cases[0].id: ${login?.id} is not a test case of this project`,
    ]);

    // A file naming A, in B: ids are A's, plans' ids too.
    const b = await project();
    const byId = text.replace(/ {6}- Log in\n/, `      - ${login?.id}\n`);
    expect(byId).to.contain(`- ${login?.id}\n`);
    await importText(b, byId);
    const { testCases: inB, testPlans } = await contentOf(b);
    expect(testPlans[0]?.testCaseIds).to.deep.equal([inB[1]?.id, inB[0]?.id]);

    // An export made before files named their project has no `project`: its ids are taken as this
    // project's, and refused as before.
    const old = text.replace(/^project: .*\n/, "");
    const c = await project();
    const unknown = await refused(importText(c, old, true));
    expect(unknown.violations[0]).to.equal(
      `test_cases[0].id: ${login?.id} is not a test case of this project`,
    );
  });

  it("refuses test cases sharing a name in another project's file, saying they are matched by name", async () => {
    const b = await project();
    const twins = [
      "project: prj_01jd000000000000000000000z",
      "testCases:",
      "  - { id: tc_01jd000000000000000000000a, name: Twin, steps: [{ name: s, http: { method: GET, path: /a } }] }",
      "  - { id: tc_01jd000000000000000000000b, name: twin, steps: [{ name: s, http: { method: GET, path: /b } }] }",
    ].join("\n");
    const { violations } = await refused(importText(b, twins));
    expect(violations).to.deep.equal([
      "test_cases[0].name: testCases[1] has the same name: the file comes from another project, so its test cases are matched by name and each needs a name of its own",
      "test_cases[1].name: testCases[0] has the same name: the file comes from another project, so its test cases are matched by name and each needs a name of its own",
    ]);
    expect((await contentOf(b)).testCases).to.deep.equal([]);
  });

  it("matches environments by name: changes what differs, moves the default, leaves the others alone", async () => {
    const projectId = await project();
    const request = { actor: editor, projectId };
    const staging = (
      await catalog.createEnvironment({ ...request, name: "Staging", baseUrl: "http://old.example.com" })
    ).environment;
    const local = (
      await catalog.createEnvironment({
        ...request,
        name: "local",
        baseUrl: "http://localhost:8080",
        isDefault: true,
      })
    ).environment;
    const untouched = (
      await catalog.createEnvironment({ ...request, name: "other", baseUrl: "http://other.example.com" })
    ).environment;
    const text = [
      "environments:",
      "  - { name: staging, baseUrl: https://staging.example.com/, isDefault: true }",
      "  - { name: LOCAL, baseUrl: http://localhost:8080 }",
      "  - { name: new, baseUrl: https://new.example.com }",
    ].join("\n");
    const preview = await importText(projectId, text, true);
    expect(outcomes(preview.environments)).to.deep.equal([
      ["environments[0]", "CHANGED", "name,baseUrl,isDefault"],
      ["environments[1]", "CHANGED", "name,isDefault"],
      ["environments[2]", "CREATED", ""],
    ]);
    expect(preview.environments.map((e) => e.id)).to.deep.equal([staging?.id, local?.id, ""]);
    const applied = await importText(projectId, text);
    const { environments } = await contentOf(projectId);
    expect(environments.map((e) => [e.id, e.name, e.baseUrl, e.isDefault])).to.deep.equal([
      [staging?.id, "staging", "https://staging.example.com", true],
      [local?.id, "LOCAL", "http://localhost:8080", false],
      [untouched?.id, "other", "http://other.example.com", false],
      [applied.environments[2]?.id, "new", "https://new.example.com", false],
    ]);
    // Not in the document, not the default: not written at all.
    expect(environments[2]?.updatedAt).to.deep.equal(untouched?.updatedAt);
    const again = await importText(projectId, text);
    expect(again.environments.map((e) => ItemOutcome[e.outcome])).to.deep.equal(Array(3).fill("UNCHANGED"));
  });

  it("names every problem of environments and variables at its path, leaves existing variables alone, and writes nothing", async () => {
    const projectId = await project();
    const request = { actor: editor, projectId };
    await catalog.createEnvironment({ ...request, name: "dup", baseUrl: "http://a.example.com" });
    await catalog.createEnvironment({ ...request, name: "DUP", baseUrl: "http://b.example.com" });
    const kept = (await catalog.createVariable({ ...request, name: "Api_Token", value: "kept-value-123" }))
      .variable;
    const before = await contentOf(projectId);
    const { violations, message, preview } = await refused(
      catalog.importContent({
        ...request,
        environments: [
          { name: "ok", baseUrl: "https://ok.example.com", isDefault: true },
          { name: "dup", baseUrl: "http://c.example.com" },
          { name: " ", baseUrl: "ftp://x" },
          { name: "second default", baseUrl: "https://u:p@x.example.com", isDefault: true },
          { name: "OK", baseUrl: "https://ok.example.com" },
        ],
        variables: ["API_TOKEN", "NEW_ONE", "new_one", "1bad"],
        testCases: [{ name: "fine", steps: [httpStep()] }],
      }),
    );
    expect(violations).to.deep.equal([
      "environments[0].name: environments[4] has the same name: environments are matched by name, so each needs a name of its own",
      `environments[1].name: 2 environments of the project have this name (${before.environments.map((e) => e.id).join(", ")}): environments are matched by name, so rename all but one of them first`,
      "environments[2].name: is required",
      "environments[2].base_url: must be an absolute http:// or https:// URL",
      "environments[3].base_url: must not carry a user name or password (user:pass@host): keep credentials in variables and send them in a step's headers",
      "environments[3].is_default: environments[0] is the default already: a project has one default environment",
      "environments[4].name: environments[0] has the same name: environments are matched by name, so each needs a name of its own",
      "variables[2]: repeats variables[1] (variable names are compared ignoring case)",
      "variables[3]: must start with a letter or underscore and hold only letters, digits and underscores (at most 64)",
    ]);
    expect(message).to.equal(
      'environments[0] "ok": name: environments[4] has the same name: environments are matched by name, so each needs a name of its own (9 problems in 7 items; each is in the FieldViolations detail)',
    );
    // What would happen to the items without a problem: the existing variable is left as it is.
    expect(outcomes(preview?.variables ?? [])).to.deep.equal([
      ["variables[0]", "UNCHANGED", ""],
      ["variables[1]", "CREATED", ""],
      ["variables[2]", "UNSPECIFIED", ""],
      ["variables[3]", "UNSPECIFIED", ""],
    ]);
    expect(preview?.variables[0]?.id).to.equal(kept?.id);
    expect(outcomes(preview?.testCases ?? [])).to.deep.equal([["testCases[0]", "CREATED", ""]]);
    expect(await contentOf(projectId), "nothing written").to.deep.equal(before);

    // Without the bad items: the existing variable keeps its name and its value.
    const done = await catalog.importContent({ ...request, variables: ["API_TOKEN", "NEW_ONE"] });
    expect(outcomes(done.variables)).to.deep.equal([
      ["variables[0]", "UNCHANGED", ""],
      ["variables[1]", "CREATED", ""],
    ]);
    expect(done.variablesWithoutValue).to.deep.equal(["NEW_ONE"]);
    expect((await values(projectId)).values).to.deep.equal({ Api_Token: "kept-value-123" });
  });

  it("holds at most 100 environments and 500 variable names", async () => {
    const projectId = await project();
    const { violations } = await refused(
      catalog.importContent({
        actor: editor,
        projectId,
        environments: Array.from({ length: 101 }, (_, i) => ({
          name: `e${i}`,
          baseUrl: "https://x.example.com",
        })),
        variables: Array.from({ length: 501 }, (_, i) => `V${i}`),
      }),
    );
    expect(violations).to.deep.equal([
      "environments: must hold at most 100 environments (got 101): split the document into several",
      "variables: must hold at most 500 variables (got 501): split the document into several",
    ]);
    expect((await contentOf(projectId)).environments).to.deep.equal([]);
  });
});
