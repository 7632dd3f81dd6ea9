import { Code } from "@connectrpc/connect";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ItemOutcome } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
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

// Playwright spec cases (catalog.proto TestCase.playwright, playwright.proto): a test case holds
// steps or one spec file with helper files; stored, versioned, bounded, resolved for a run and
// imported from a content document by the spec's path.

const specSource = `import { test, expect } from "@playwright/test";
import { LoginPage } from "./pages/login";

test("logs in", async ({ page }) => {
  await new LoginPage(page).logIn(process.env.USER_NAME ?? "ann");
  await expect(page.getByRole("heading")).toHaveText("Welcome");
});
`;
const helperSource = `export class LoginPage {
  constructor(private page) {}
  async logIn(name: string) { await this.page.goto("/login"); }
}
`;

const kib = 1024;

describe("catalog: Playwright spec cases", () => {
  let h: InProcessCatalog;
  let catalog: Catalog;
  let seed: Awaited<ReturnType<typeof seedOrganization>>;
  let editor: Actor;
  let viewer: Actor;
  let projectId: string;

  before(async () => {
    h = await startInProcessCatalog();
    catalog = h.catalog;
    seed = await seedOrganization(catalog);
    editor = member(seed.members.editor);
    viewer = member(seed.members.viewer);
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

  const spec = (path = "tests/login.spec.ts", source = specSource, files = [helper()]) => ({
    spec: { path, source },
    files,
  });
  function helper(path = "pages/login.ts", source = helperSource) {
    return { path, source };
  }
  const createSpec = async (playwright = spec(), name = unique("spec")) =>
    (await catalog.createTestCase({ actor: editor, projectId, name, tags: ["e2e"], playwright }))
      .testCase as TestCase;
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
  const refusedSpec = async (playwright: ReturnType<typeof spec>) =>
    (await refused(catalog.createTestCase({ actor: editor, projectId, name: unique("bad"), playwright })))
      .violations;

  it("creates a spec case without steps and reads it back, in a list only with include_steps", async () => {
    const created = await createSpec();
    expect(created.steps).to.deep.equal([]);
    expect(created.version).to.equal(1);
    expect(created.playwright?.spec?.path).to.equal("tests/login.spec.ts");
    expect(created.playwright?.spec?.source).to.equal(specSource);
    expect(created.playwright?.files.map((f) => [f.path, f.source])).to.deep.equal([
      ["pages/login.ts", helperSource],
    ]);

    const read = (await catalog.getTestCase({ actor: viewer, projectId, testCaseId: created.id })).testCase;
    expect(read?.playwright?.spec?.source).to.equal(specSource);

    const listed = async (includeSteps: boolean) =>
      (await catalog.listTestCases({ actor: viewer, projectId, testCaseIds: [created.id], includeSteps }))
        .testCases[0];
    expect((await listed(true))?.playwright?.spec?.path).to.equal("tests/login.spec.ts");
    expect((await listed(false))?.playwright).to.equal(undefined);
  });

  it("versions a spec's changes: a new source is version 2, the same spec again stores nothing", async () => {
    const created = await createSpec();
    const changed = spec("tests/login.spec.ts", specSource.replace("Welcome", "Hello"));
    const v2 = (
      await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: created.id,
        playwright: changed,
        expectedVersion: 1,
      })
    ).testCase as TestCase;
    expect(v2.version).to.equal(2);
    expect(v2.playwright?.spec?.source).to.include("Hello");

    const again = (
      await catalog.updateTestCase({ actor: editor, projectId, testCaseId: created.id, playwright: changed })
    ).testCase as TestCase;
    expect(again.version).to.equal(2);

    const first = (
      await catalog.getTestCase({ actor: viewer, projectId, testCaseId: created.id, version: 1 })
    ).testCase;
    expect(first?.playwright?.spec?.source).to.include("Welcome");
    expect(first?.playwright?.files).to.have.length(1);

    // A save made on the old version is refused as for steps.
    await rejects(
      catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: created.id,
        playwright: spec(),
        expectedVersion: 1,
      }),
      Code.Aborted,
    );
  });

  it("turns a case of steps into a spec case and back, each a version", async () => {
    const steps = (
      await catalog.createTestCase({ actor: editor, projectId, name: unique("steps"), steps: [httpStep()] })
    ).testCase as TestCase;
    const asSpec = (
      await catalog.updateTestCase({ actor: editor, projectId, testCaseId: steps.id, playwright: spec() })
    ).testCase as TestCase;
    expect(asSpec.version).to.equal(2);
    expect(asSpec.steps).to.deep.equal([]);
    expect(asSpec.playwright?.spec?.path).to.equal("tests/login.spec.ts");

    const back = (
      await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: steps.id,
        steps: { steps: [httpStep()] },
      })
    ).testCase as TestCase;
    expect(back.version).to.equal(3);
    expect(back.steps).to.have.length(1);
    expect(back.playwright).to.equal(undefined);

    const both = await refused(
      catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: steps.id,
        steps: { steps: [httpStep()] },
        playwright: spec(),
      }),
    );
    expect(both.violations).to.deep.equal([
      "playwright: set steps or playwright, not both: a test case holds steps or a Playwright spec",
    ]);
  });

  it("refuses steps and a spec together, and a spec case from a Viewer", async () => {
    const both = await refused(
      catalog.createTestCase({
        actor: editor,
        projectId,
        name: unique("both"),
        steps: [httpStep()],
        playwright: spec(),
      }),
    );
    expect(both.violations).to.deep.equal([
      "steps: must be empty for a Playwright spec case: a test case holds steps or a spec, not both",
    ]);
    await rejects(
      catalog.createTestCase({ actor: viewer, projectId, name: unique("v"), playwright: spec() }),
      Code.PermissionDenied,
    );
  });

  it("takes a spec at its bounds and refuses one byte or file past them, naming the bound", async () => {
    // Exactly 256 KiB of spec, 20 helpers and 1 MiB in all are taken.
    const atBound = await createSpec(
      spec("bounds.spec.ts", "x".repeat(256 * kib), [
        ...Array.from({ length: 3 }, (_, i) => helper(`h${i}.ts`, "y".repeat(256 * kib))),
        ...Array.from({ length: 17 }, (_, i) => helper(`small${i}.json`, "")),
      ]),
    );
    expect(atBound.playwright?.files).to.have.length(20);

    expect(await refusedSpec(spec("big.spec.ts", "x".repeat(256 * kib + 1), []))).to.deep.equal([
      "playwright.spec.source: must be at most 256 KiB (got 262145 bytes)",
    ]);
    expect(
      await refusedSpec(spec("h.spec.ts", specSource, [helper("big.ts", "é".repeat(128 * kib + 1))])),
    ).to.deep.equal(["playwright.files[0].source: must be at most 256 KiB (got 262146 bytes)"]);
    expect(
      await refusedSpec(
        spec(
          "many.spec.ts",
          specSource,
          Array.from({ length: 21 }, (_, i) => helper(`h${i}.ts`, "")),
        ),
      ),
    ).to.deep.equal(["playwright.files: must hold at most 20 helper files (got 21)"]);
    const total = await refusedSpec(
      spec(
        "total.spec.ts",
        "x".repeat(256 * kib),
        Array.from({ length: 3 }, (_, i) => helper(`h${i}.ts`, "y".repeat(256 * kib))).concat(
          helper("one-more.ts", "z"),
        ),
      ),
    );
    expect(total).to.deep.equal([
      `playwright: must hold at most 1 MiB of sources in all, spec and helper files together (got ${1024 * kib + 1} bytes)`,
    ]);
  });

  it("refuses paths outside the spec's folder, of other kinds, repeated, and sources with NUL", async () => {
    const pathOf = async (specPath: string, helperPath = "pages/login.ts") =>
      refusedSpec(spec(specPath, specSource, [helper(helperPath)]));
    expect(await pathOf("../login.spec.ts")).to.deep.equal([
      `playwright.spec.path: must not contain ".." (a file stays inside the spec's folder)`,
    ]);
    expect(await pathOf("/etc/login.spec.ts")).to.deep.equal([
      "playwright.spec.path: must be relative to the spec's folder (not start with / or a drive)",
    ]);
    expect(await pathOf("C:/login.spec.ts")).to.deep.equal([
      "playwright.spec.path: must be relative to the spec's folder (not start with / or a drive)",
    ]);
    expect(await pathOf("tests\\login.spec.ts")).to.deep.equal([
      'playwright.spec.path: must use "/" between folders, not "\\"',
    ]);
    expect(await pathOf("tests/login.ts")).to.deep.equal([
      "playwright.spec.path: must end in .spec.ts, .spec.js, .test.ts or .test.js",
    ]);
    expect(await pathOf("login.spec.ts", "data/users.csv")).to.deep.equal([
      "playwright.files[0].path: must end in .ts, .js, .mjs, .cjs or .json",
    ]);
    expect(await pathOf("login.spec.ts", "pages/../../x.ts")).to.deep.equal([
      `playwright.files[0].path: must not contain ".." (a file stays inside the spec's folder)`,
    ]);
    expect(await pathOf("a//login.spec.ts")).to.deep.equal([
      'playwright.spec.path: must not have empty or "." parts (a/b.ts, not a//b.ts or ./b.ts)',
    ]);
    expect(await pathOf("Login.spec.ts", "login.spec.ts")).to.deep.equal([
      "playwright.files[0].path: is the path of playwright.spec too: each file needs its own path",
    ]);
    // Every service refuses NUL in any text of a request before it reaches the handler.
    const nul = await refused(
      catalog.createTestCase({
        actor: editor,
        projectId,
        name: unique("nul"),
        playwright: spec("nul.spec.ts", "test('a', () => {});\u0000", []),
      }),
    );
    expect(nul.message).to.equal("text in the request must not contain NUL characters");
    expect(await refusedSpec(spec("empty.spec.ts", "  \n", []))).to.deep.equal([
      "playwright.spec.source: is required",
    ]);
    const noSpec = await refused(
      catalog.createTestCase({ actor: editor, projectId, name: unique("n"), playwright: { files: [] } }),
    );
    expect(noSpec.violations).to.deep.equal([
      "playwright.spec: is required: the spec file, with its path and source",
    ]);
  });

  it("lists the spec cases reading a variable as process.env.NAME, and not those reading a longer name", async () => {
    const reads = await createSpec(
      spec("tests/env.spec.ts", 'test("x", async () => { const u = process.env.SHOP_USER; });', [
        helper("env.ts", "export const token = process.env.SHOP_TOKEN_2;"),
      ]),
    );
    const usedBy = async (name: string) =>
      (await catalog.listTestCases({ actor: viewer, projectId, usesVariable: name })).testCases.map(
        (c) => c.id,
      );
    expect(await usedBy("SHOP_USER")).to.include(reads.id);
    expect(await usedBy("SHOP_TOKEN_2")).to.include(reads.id);
    expect(await usedBy("SHOP")).to.not.include(reads.id);
    expect(await usedBy("SHOP_TOKEN")).to.not.include(reads.id);
  });

  it("hands a run the spec as it was when the run was resolved", async () => {
    const created = await createSpec(spec("tests/run.spec.ts"));
    const { testCases } = await catalog.resolveRunSelection({
      actor: editor,
      projectId,
      selection: { case: "testCaseIds", value: { ids: [created.id] } },
    });
    expect(testCases[0]?.steps).to.deep.equal([]);
    expect(testCases[0]?.playwright?.spec).to.deep.include({ path: "tests/run.spec.ts", source: specSource });
    expect(testCases[0]?.playwright?.files.map((f) => f.path)).to.deep.equal(["pages/login.ts"]);
    expect(testCases[0]?.version).to.equal(1);
  });

  it("refuses a run whose specs together hold more than 16 MiB of sources, saying so", async () => {
    // Seventeen cases of 1 MiB each, tagged together: one past the bound.
    const tag = unique("big-run");
    const ids: string[] = [];
    for (let i = 0; i < 17; i++) {
      const created = await catalog.createTestCase({
        actor: editor,
        projectId,
        name: `big ${i}`,
        tags: [tag],
        playwright: spec(
          `big${i}.spec.ts`,
          "x".repeat(256 * kib),
          Array.from({ length: 3 }, (_, j) => helper(`h${j}.ts`, "y".repeat(256 * kib))),
        ),
      });
      ids.push(created.testCase?.id ?? "");
    }
    const refused = await rejects(
      catalog.resolveRunSelection({
        actor: editor,
        projectId,
        selection: { case: "tags", value: { tags: [tag] } },
      }),
      Code.InvalidArgument,
    );
    expect(refused.rawMessage).to.equal(
      `the selection's Playwright specs hold ${17 * 1024 * kib} bytes of sources; a run takes at most ${16 * 1024 * kib} (16 MiB): split the run`,
    );
    // Sixteen are taken.
    const { testCases } = await catalog.resolveRunSelection({
      actor: editor,
      projectId,
      selection: { case: "testCaseIds", value: { ids: ids.slice(0, 16) } },
    });
    expect(testCases).to.have.length(16);
  });

  describe("content import", () => {
    let importProject: string;
    before(async () => {
      importProject = await newProject(catalog, seed.orgId);
    });
    const importCases = (testCases: object[], dryRun = false) =>
      catalog.importContent({ actor: editor, projectId: importProject, testCases, dryRun });

    it("creates one case per spec file, then updates each by its path, renamed or not", async () => {
      const first = await importCases([
        { name: "login", playwright: spec("tests/login.spec.ts") },
        { name: "cart", playwright: spec("tests/cart.spec.ts", specSource, []) },
      ]);
      expect(first.testCases.map((c) => c.outcome)).to.deep.equal([ItemOutcome.CREATED, ItemOutcome.CREATED]);
      const [loginId, cartId] = first.testCases.map((c) => c.id);

      const again = await importCases([
        { name: "login", playwright: spec("tests/login.spec.ts") },
        { name: "cart", playwright: spec("tests/cart.spec.ts", specSource, []) },
      ]);
      expect(again.testCases.map((c) => c.outcome)).to.deep.equal([
        ItemOutcome.UNCHANGED,
        ItemOutcome.UNCHANGED,
      ]);

      // Renamed and changed in the document: still the case of that spec path.
      const changed = await importCases([
        { name: "log in works", playwright: spec("tests/login.spec.ts", `${specSource}\n// more\n`) },
      ]);
      expect(changed.testCases[0]).to.deep.include({ id: loginId, outcome: ItemOutcome.CHANGED });
      expect(changed.testCases[0]?.changedFields).to.deep.equal(["name", "playwright"]);
      expect(changed.otherTestCases).to.equal(1);
      const login = (
        await catalog.getTestCase({ actor: viewer, projectId: importProject, testCaseId: loginId })
      ).testCase;
      expect(login?.name).to.equal("log in works");
      expect(login?.version).to.equal(2);
      expect(login?.playwright?.spec?.source).to.include("// more");
      expect(cartId).to.match(/^tc_/);
    });

    it("refuses a document holding one spec path twice, and a spec past its bounds, by their paths", async () => {
      const error = await rejects(
        importCases([
          { name: "a", playwright: spec("tests/same.spec.ts") },
          { name: "b", playwright: spec("tests/same.spec.ts") },
          { name: "c", playwright: spec("tests/c.spec.ts", "x".repeat(256 * kib + 1), []) },
        ]),
        Code.InvalidArgument,
      );
      const violations = error
        .findDetails(FieldViolationsSchema)
        .flatMap((d) => d.violations.map((v) => `${v.field}: ${v.description}`));
      expect(violations).to.deep.equal([
        "test_cases[0].playwright.spec.path: testCases[1] has the same spec path: the document holds each spec file once",
        "test_cases[1].playwright.spec.path: testCases[0] has the same spec path: the document holds each spec file once",
        "test_cases[2].playwright.spec.source: must be at most 256 KiB (got 262145 bytes)",
      ]);
    });
  });
});
