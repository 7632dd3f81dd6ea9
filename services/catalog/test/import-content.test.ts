// ImportContent over real gRPC against a real catalog and PostgreSQL: previews write nothing,
// applying does what the preview said in one transaction, items are matched by id then by name,
// and every kind of bad item is named while nothing at all is written.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { httpStepOf, importItemsOf, readContentDocument, writeContentDocument } from "@testrun/content-file";
import {
  ImportContentResponseSchema,
  type ImportTestCaseSchema,
  type ImportTestPlanSchema,
  ItemOutcome,
  type TestCase,
  type TestPlan,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
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
} from "@testrun/testing";
import { expect } from "chai";

type CaseInit = MessageInitShape<typeof ImportTestCaseSchema>;
type PlanInit = MessageInitShape<typeof ImportTestPlanSchema>;

const testCase = (
  name: string,
  path = "/health",
  extra: { id?: string; tags?: string[]; enabled?: boolean } = {},
): CaseInit => ({
  name,
  tags: [],
  steps: [httpStep(path)],
  ...extra,
});

/** An outcome per item, as the response lists them: `[path, outcome, changed fields]`. */
const outcomes = (items: { path: string; outcome: ItemOutcome; changedFields: string[] }[]) =>
  items.map((i) => [i.path, ItemOutcome[i.outcome], i.changedFields.join(",")]);

describe("catalog: ImportContent (content documents)", () => {
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

  /** Everything the project holds, as read back: test cases with steps, plans with their cases. */
  const contentOf = async (projectId: string) => {
    const { testCases } = await catalog.listTestCases({ actor: editor, projectId, includeSteps: true });
    const { testPlans } = await catalog.listTestPlans({ actor: editor, projectId });
    return { testCases, testPlans };
  };
  const create = async (projectId: string, name: string, path = "/health", tags: string[] = []) =>
    (await catalog.createTestCase({ actor: editor, projectId, name, tags, steps: [httpStep(path)] }))
      .testCase as TestCase;
  const createPlan = async (projectId: string, name: string, testCaseIds: string[], description = "") =>
    (await catalog.createTestPlan({ actor: editor, projectId, name, description, testCaseIds }))
      .testPlan as TestPlan;
  const importing = (
    projectId: string,
    request: { testCases?: CaseInit[]; testPlans?: PlanInit[]; dryRun?: boolean },
    actor = editor,
  ) => catalog.importContent({ actor, projectId, ...request });
  /** The refusal's violations as `field: description`, its message, and the preview it carries. */
  const refused = async (call: Promise<unknown>) => {
    const error = await rejects(call, Code.InvalidArgument);
    const violations = error.findDetails(FieldViolationsSchema).flatMap((d) => d.violations);
    const [preview] = error.findDetails(ImportContentResponseSchema);
    return {
      message: error.rawMessage,
      violations: violations.map((v) => `${v.field}: ${v.description}`),
      preview,
    };
  };

  it("previews without writing, then applies exactly what it previewed: created, changed (which fields), left alone", async () => {
    const projectId = await project();
    const login = await create(projectId, "Log in", "/login", ["smoke"]);
    const profile = await create(projectId, "Profile", "/me");
    const health = await create(projectId, "Health", "/health");
    const untouched = await create(projectId, "Not in the document", "/other");
    const smoke = await createPlan(projectId, "smoke", [login.id]);
    const request = {
      testCases: [
        // By id: renamed, steps changed.
        testCase("Log in works", "/api/login", { id: login.id, tags: ["smoke"] }),
        // By name (letter case ignored): tags and enabled changed.
        testCase("profile", "/me", { tags: ["auth"], enabled: false }),
        // By name, as it is: left alone.
        testCase("Health", "/health"),
        testCase("Sign up", "/signup", { tags: ["new"] }),
      ],
      testPlans: [
        // By name; its test cases named by their names in the document, new and renamed ones too.
        { name: "smoke", description: "before a deploy", testCases: ["log in works", "Sign up", "Health"] },
        { name: "nightly", description: "", testCases: [health.id, "Not in the document"] },
      ],
    };
    const before = await contentOf(projectId);

    const preview = await importing(projectId, { ...request, dryRun: true });
    expect(outcomes(preview.testCases)).to.deep.equal([
      ["testCases[0]", "CHANGED", "name,steps"],
      ["testCases[1]", "CHANGED", "name,tags,enabled"],
      ["testCases[2]", "UNCHANGED", ""],
      ["testCases[3]", "CREATED", ""],
    ]);
    expect(preview.testCases.map((i) => [i.id, i.name])).to.deep.equal([
      [login.id, "Log in works"],
      [profile.id, "profile"],
      [health.id, "Health"],
      ["", "Sign up"],
    ]);
    expect(outcomes(preview.testPlans)).to.deep.equal([
      ["testPlans[0]", "CHANGED", "description,testCases"],
      ["testPlans[1]", "CREATED", ""],
    ]);
    expect([preview.applied, preview.otherTestCases, preview.otherTestPlans]).to.deep.equal([false, 1, 0]);
    expect(await contentOf(projectId), "a preview writes nothing").to.deep.equal(before);

    const applied = await importing(projectId, request);
    expect(applied.applied).to.equal(true);
    expect(outcomes(applied.testCases)).to.deep.equal(outcomes(preview.testCases));
    expect(outcomes(applied.testPlans)).to.deep.equal(outcomes(preview.testPlans));
    const signUpId = applied.testCases[3]?.id ?? "";
    expect(signUpId).to.match(/^tc_/);
    const nightlyId = applied.testPlans[1]?.id ?? "";
    expect(nightlyId).to.match(/^pln_/);

    const after = await contentOf(projectId);
    const byId = new Map(after.testCases.map((c) => [c.id, c]));
    expect(after.testCases.map((c) => c.id)).to.deep.equal([
      login.id,
      profile.id,
      health.id,
      untouched.id,
      signUpId,
    ]);
    expect(byId.get(login.id)?.name).to.equal("Log in works");
    expect(httpStepOf(byId.get(login.id)?.steps[0])?.request?.path).to.equal("/api/login");
    expect([
      byId.get(profile.id)?.name,
      byId.get(profile.id)?.tags,
      byId.get(profile.id)?.enabled,
    ]).to.deep.equal(["profile", ["auth"], false]);
    // Left alone: not written at all.
    const timeOf = (c: TestCase | TestPlan | undefined) =>
      c?.updatedAt ? timestampDate(c.updatedAt).getTime() : 0;
    expect(timeOf(byId.get(health.id))).to.equal(timeOf(before.testCases.find((c) => c.id === health.id)));
    expect(timeOf(byId.get(untouched.id))).to.equal(timeOf(untouched));
    expect(byId.get(signUpId)?.tags).to.deep.equal(["new"]);
    // Each change is a version by the importing member; what was left alone keeps its version.
    const versionOf = (c: TestCase | TestPlan | undefined) => [
      c?.version,
      c?.updatedBy?.kind.case === "member" ? c.updatedBy.kind.value.memberId : c?.updatedBy?.kind.case,
    ];
    expect(versionOf(byId.get(login.id))).to.deep.equal([2, seed.members.editor]);
    expect(versionOf(byId.get(health.id))).to.deep.equal([1, seed.members.editor]);
    expect(versionOf(byId.get(signUpId))).to.deep.equal([1, seed.members.editor]);
    expect(versionOf(after.testPlans.find((p) => p.id === smoke.id))).to.deep.equal([2, seed.members.editor]);
    expect(after.testPlans.map((p) => [p.id, p.name, p.description, p.testCaseIds])).to.deep.equal([
      [smoke.id, "smoke", "before a deploy", [login.id, signUpId, health.id]],
      [nightlyId, "nightly", "", [health.id, untouched.id]],
    ]);

    // The same document again: the new items are now matched by their names, and like them.
    const again = await importing(projectId, request);
    expect([...again.testCases, ...again.testPlans].map((i) => ItemOutcome[i.outcome])).to.deep.equal(
      Array(6).fill("UNCHANGED"),
    );
    expect(await contentOf(projectId), "nothing written").to.deep.equal(after);
  });

  it("exported, then imported as it is: every item UNCHANGED, nothing written (updated_at as it was)", async () => {
    const projectId = await project();
    const a = await create(projectId, "a", "/a", ["x", "Y"]);
    const b = await create(projectId, "B", "/b");
    const twin1 = await create(projectId, "twin", "/t1");
    const twin2 = await create(projectId, "Twin", "/t2");
    await catalog.updateTestCase({ actor: editor, projectId, testCaseId: b.id, enabled: false });
    await catalog.updateTestCase({
      actor: editor,
      projectId,
      testCaseId: a.id,
      steps: {
        steps: [
          {
            name: "every kind of value",
            kind: {
              case: "http",
              value: {
                request: {
                  method: "POST",
                  path: "/x",
                  headers: { "x-a": "1" },
                  query: { q: "2" },
                  body: {
                    case: "json",
                    value: {
                      kind: {
                        case: "structValue",
                        value: {
                          fields: {
                            z: { kind: { case: "numberValue", value: 1.5 } },
                            a: { kind: { case: "nullValue", value: 0 } },
                          },
                        },
                      },
                    },
                  },
                  timeoutMs: 500,
                },
                expect: { status: [200, 201], bodyContains: ["ok"], maxDurationMs: 900 },
                save: { token: "$.token" },
              },
            },
          },
        ],
      },
    });
    // A test case recording traces, of browser steps.
    await catalog.updateTestCase({
      actor: editor,
      projectId,
      testCaseId: twin1.id,
      recordTrace: true,
      steps: {
        steps: readContentDocument(
          `testCases:
  - name: browser
    steps:
      - { name: open, browser: { goto: { url: /login } } }
      - { name: wait, browser: { waitFor: { locator: { testId: spinner }, state: hidden }, timeoutMs: 3000 } }
      - { name: email, browser: { fill: { locator: { label: Email }, value: "{{EMAIL}}" } } }
      - { name: home, browser: { screenshot: { name: home, fullPage: true } } }`,
          "yaml",
        ).testCases[0]?.steps,
      },
    });
    await createPlan(projectId, "plan", [twin2.id, a.id, twin1.id], "described");
    await createPlan(projectId, "empty plan", []);
    const before = await contentOf(projectId);
    expect(before.testCases.map((c) => c.recordTrace)).to.deep.equal([false, false, true, false]);

    for (const format of ["yaml", "json"] as const) {
      const text = writeContentDocument(before, format);
      const document = readContentDocument(text, format);
      const result = await importing(projectId, importItemsOf(document));
      expect(result.applied).to.equal(true);
      expect([...result.testCases, ...result.testPlans].map((i) => ItemOutcome[i.outcome])).to.deep.equal(
        Array(6).fill("UNCHANGED"),
      );
      expect(await contentOf(projectId), `after the ${format} import`).to.deep.equal(before);
    }
  });

  it("sets recordTrace as the document says, absent meaning false: a change of it is a change named recordTrace", async () => {
    const projectId = await project();
    const traced = await create(projectId, "traced", "/t");
    const plain = await create(projectId, "plain", "/p");
    await catalog.updateTestCase({ actor: editor, projectId, testCaseId: plain.id, recordTrace: true });
    const request = {
      testCases: [
        { ...testCase("traced", "/t"), recordTrace: true },
        testCase("plain", "/p"),
        { ...testCase("new", "/n"), recordTrace: true },
      ],
    };
    const result = await importing(projectId, request);
    expect(outcomes(result.testCases)).to.deep.equal([
      ["testCases[0]", "CHANGED", "recordTrace"],
      ["testCases[1]", "CHANGED", "recordTrace"],
      ["testCases[2]", "CREATED", ""],
    ]);
    const after = await contentOf(projectId);
    expect(after.testCases.map((c) => [c.name, c.recordTrace, c.version])).to.deep.equal([
      ["traced", true, 2],
      ["plain", false, 3],
      ["new", true, 1],
    ]);
    expect((await importing(projectId, request)).testCases.map((i) => ItemOutcome[i.outcome])).to.deep.equal(
      Array(3).fill("UNCHANGED"),
    );
    expect(traced.recordTrace).to.equal(false);
  });

  it("names each bad item, every problem at once, and writes nothing when one item of many is bad", async () => {
    const projectId = await project();
    const otherProject = await project();
    const foreign = await create(otherProject, "foreign", "/f");
    const dup1 = await create(projectId, "Duplicate", "/d1");
    const dup2 = await create(projectId, "duplicate", "/d2");
    const kept = await create(projectId, "Kept", "/kept");
    const twin1 = await create(projectId, "Twin", "/t1");
    const twin2 = await create(projectId, "TWIN", "/t2");
    await createPlan(projectId, "Plan", [kept.id]);
    const before = await contentOf(projectId);

    const { message, violations, preview } = await refused(
      importing(projectId, {
        testCases: [
          testCase("Good new one", "/new"),
          testCase("Kept", "/kept-changed"),
          // A foreign id.
          testCase("foreign", "/f", { id: foreign.id }),
          // A name two test cases of the project have.
          testCase("DUPLICATE", "/d"),
          // The same test case as testCases[1], once by id.
          testCase("Kept again", "/k", { id: kept.id }),
          // Bad fields: every one named.
          testCase("", "no-slash", { tags: [""] }),
          // Two of the document's test cases without an id may not share a name.
          testCase("Same", "/s1"),
          testCase("same", "/s2"),
        ],
        testPlans: [
          {
            name: "Plan",
            description: "",
            testCases: ["Good new one", "nobody", "twin", dup1.id, dup1.id],
          },
          { name: "", description: "x".repeat(2001), testCases: [] },
        ],
      }),
    );
    expect(violations).to.deep.equal([
      `test_cases[2].id: ${foreign.id} is not a test case of this project`,
      `test_cases[3].name: 2 test cases of the project have this name: give this one the id of the one it is (${dup1.id}, ${dup2.id})`,
      `test_cases[4].id: is the same test case (${kept.id}) as testCases[1]: the document holds each test case once`,
      "test_cases[5].name: is required",
      "test_cases[5].tags[0]: must not be empty",
      'test_cases[5].steps[0].http.request.path: must start with "/"',
      "test_cases[6].name: testCases[7] has the same name: give this test case its id, or another name",
      "test_cases[7].name: testCases[6] has the same name: give this test case its id, or another name",
      'test_plans[0].test_cases[1]: "nobody" is neither the id nor the name of a test case of the project (as this import leaves it)',
      `test_plans[0].test_cases[2]: 2 test cases are named "twin": give the id of the one meant (${twin1.id}, ${twin2.id})`,
      `test_plans[0].test_cases[4]: repeats test_plans[0].test_cases[3] (${dup1.id}); a plan lists a test case once`,
      "test_plans[1].name: is required",
      "test_plans[1].description: must be at most 2000 characters",
    ]);
    expect(message).to.equal(
      `test_cases[2] "foreign": id: ${foreign.id} is not a test case of this project (13 problems in 8 items; each is in the FieldViolations detail)`,
    );
    // The preview still says what would happen to the good items.
    expect(outcomes(preview?.testCases ?? []).map(([, outcome]) => outcome)).to.deep.equal([
      "CREATED",
      "CHANGED",
      "UNSPECIFIED",
      "UNSPECIFIED",
      "UNSPECIFIED",
      "UNSPECIFIED",
      "UNSPECIFIED",
      "UNSPECIFIED",
    ]);
    expect(await contentOf(projectId), "nothing written").to.deep.equal(before);
  });

  it("refuses a plan listing one test case twice, by id and by name", async () => {
    const projectId = await project();
    const one = await create(projectId, "one");
    const { violations } = await refused(
      importing(projectId, { testPlans: [{ name: "p", description: "", testCases: [one.id, "ONE"] }] }),
    );
    expect(violations).to.deep.equal([
      `test_plans[0].test_cases[1]: repeats test_plans[0].test_cases[0] (${one.id}); a plan lists a test case once`,
    ]);
  });

  it("resolves a plan's test cases as the import leaves them: a renamed one by its new name only", async () => {
    const projectId = await project();
    const old = await create(projectId, "Old name");
    const { violations } = await refused(
      importing(projectId, {
        testCases: [testCase("New name", "/health", { id: old.id })],
        testPlans: [{ name: "p", description: "", testCases: ["Old name"] }],
      }),
    );
    expect(violations).to.deep.equal([
      'test_plans[0].test_cases[0]: "Old name" is neither the id nor the name of a test case of the project (as this import leaves it)',
    ]);
    const done = await importing(projectId, {
      testCases: [testCase("New name", "/health", { id: old.id })],
      testPlans: [{ name: "p", description: "", testCases: ["new NAME"] }],
    });
    expect((await contentOf(projectId)).testPlans[0]?.testCaseIds).to.deep.equal([old.id]);
    expect(outcomes(done.testCases)).to.deep.equal([["testCases[0]", "CHANGED", "name"]]);
  });

  it("matches a test plan by id, renaming it, and refuses an id of another project's plan", async () => {
    const projectId = await project();
    const plan = await createPlan(projectId, "old", []);
    const foreign = await createPlan(await project(), "foreign", []);
    const done = await importing(projectId, {
      testPlans: [{ id: plan.id, name: "renamed", description: "", testCases: [] }],
    });
    expect(outcomes(done.testPlans)).to.deep.equal([["testPlans[0]", "CHANGED", "name"]]);
    const { violations } = await refused(
      importing(projectId, { testPlans: [{ id: foreign.id, name: "x", description: "", testCases: [] }] }),
    );
    expect(violations).to.deep.equal([`test_plans[0].id: ${foreign.id} is not a test plan of this project`]);
  });

  it("holds at most 500 test cases and 100 test plans", async () => {
    const projectId = await project();
    const { violations, message } = await refused(
      importing(projectId, {
        testCases: Array.from({ length: 501 }, (_, i) => testCase(`c${i}`)),
        testPlans: Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, description: "", testCases: [] })),
      }),
    );
    expect(violations).to.deep.equal([
      "test_cases: must hold at most 500 test cases (got 501): split the document into several",
      "test_plans: must hold at most 100 test plans (got 101): split the document into several",
    ]);
    expect(message).to.match(/^test_cases: must hold at most 500 test cases/);
    expect((await contentOf(projectId)).testCases).to.deep.equal([]);
  });

  it("refuses a plan of more test cases than a run holds at once, and an over-long reference without repeating it", async () => {
    const projectId = await project();
    // ~1.3 MB of short references: within every byte bound, and unresolved each one.
    const references = Array.from({ length: 200_000 }, (_, i) => `missing ${i % 1000}`);
    const long = "x".repeat(100_000);
    const { violations, message } = await refused(
      importing(projectId, {
        testPlans: [
          { name: "huge", description: "", testCases: references },
          { name: "long", description: "", testCases: [long] },
        ],
      }),
    );
    expect(violations).to.deep.equal([
      "test_plans[0].test_cases: must hold at most 500 test cases (got 200000)",
      "test_plans[1].test_cases[0]: must be at most 200 characters: a test case's id or name",
    ]);
    expect(message).to.not.include(long);
    expect((await contentOf(projectId)).testPlans).to.deep.equal([]);
  });

  it("lists at most 100 problems, and says how many there are", async () => {
    const projectId = await project();
    const error = await rejects(
      importing(projectId, { testCases: Array.from({ length: 500 }, () => testCase(" ")) }),
      Code.InvalidArgument,
    );
    const listed = error.findDetails(FieldViolationsSchema).flatMap((d) => d.violations);
    expect(listed.map((v) => `${v.field}: ${v.description}`)).to.deep.equal(
      Array.from({ length: 100 }, (_, i) => `test_cases[${i}].name: is required`),
    );
    expect(error.rawMessage).to.equal(
      'test_cases[0] "": name: is required (500 problems; the first 100 are in the FieldViolations detail)',
    );
    // CreateTestCase's refusals are bounded the same way.
    const tags = await rejects(
      catalog.createTestCase({
        actor: editor,
        projectId,
        name: "t",
        tags: Array(100_000).fill(""),
        steps: [httpStep()],
      }),
      Code.InvalidArgument,
    );
    expect(tags.findDetails(FieldViolationsSchema).flatMap((d) => d.violations)).to.have.length(100);
    expect(tags.rawMessage).to.equal(
      "tags[0]: must not be empty (and 99999 more; the first 100 are in the FieldViolations detail)",
    );
  });

  it("needs change rights: a Viewer's import is refused, preview or not", async () => {
    const projectId = await project();
    for (const dryRun of [true, false]) {
      const error = await rejects(
        importing(projectId, { testCases: [testCase("x")], dryRun }, member(seed.members.viewer)),
        Code.PermissionDenied,
      );
      expect(error.rawMessage).to.equal("changing the project needs the EDITOR role or above");
    }
    expect((await contentOf(projectId)).testCases).to.deep.equal([]);
  });
});
