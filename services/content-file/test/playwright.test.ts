import { expect } from "chai";
import { importItemsOf, readContentDocument, writeContentDocument } from "../src/content-document.js";
import { checkPlaywright, helpersOf, specCasesOfFolder } from "../src/playwright.js";

// Playwright spec cases in files (playwright.ts, test-case-file.ts): a document carries a case's
// spec and helper files instead of steps, and a folder of specs becomes one case per spec file
// with the helper files it imports.

const spec = `import { test, expect } from "@playwright/test";
import { LoginPage } from "../pages/login.js";
import users from "../data/users.json";

test("logs in", async ({ page }) => {
  await new LoginPage(page).logIn(users[0].name);
});
`;

describe("content-file: Playwright spec cases", () => {
  it("reads, writes and imports a spec case of a document, its source as written", () => {
    const yaml = [
      "testCases:",
      "  - name: log in",
      "    tags: [e2e]",
      "    playwright:",
      "      spec:",
      "        path: tests/login.spec.ts",
      "        source: |",
      ...spec
        .trimEnd()
        .split("\n")
        .map((line) => (line ? `          ${line}` : "")),
      "      files:",
      "        - { path: pages/login.ts, source: 'export class LoginPage {}' }",
    ].join("\n");
    const document = readContentDocument(yaml, "yaml");
    const [testCase] = document.testCases;
    expect(testCase?.steps).to.deep.equal([]);
    expect(testCase?.playwright?.spec).to.deep.equal({ path: "tests/login.spec.ts", source: spec });
    expect(testCase?.playwright?.files).to.deep.equal([
      { path: "pages/login.ts", source: "export class LoginPage {}" },
    ]);

    const items = importItemsOf(document).testCases ?? [];
    expect(items[0]?.steps).to.deep.equal([]);
    expect(items[0]?.playwright?.spec?.path).to.equal("tests/login.spec.ts");

    // Exported and read back: the same case, its source a literal block a person reviews.
    const stored = {
      id: "tc_1",
      name: "log in",
      tags: ["e2e"],
      enabled: true,
      steps: [],
      playwright: testCase?.playwright,
    };
    const written = writeContentDocument({ testCases: [stored], testPlans: [] }, "yaml");
    expect(written).to.include("        source: |\n          import { test, expect }");
    expect(written).to.not.include("steps");
    const again = readContentDocument(written, "yaml").testCases[0];
    expect(again?.playwright).to.deep.equal(testCase?.playwright);
    const json = readContentDocument(
      writeContentDocument({ testCases: [stored], testPlans: [] }, "json"),
      "json",
    );
    expect(json.testCases[0]?.playwright).to.deep.equal(testCase?.playwright);
  });

  it("refuses steps beside a spec, and a spec file without its source, by their paths", () => {
    const read = (lines: string[]) => () => readContentDocument(["testCases:", ...lines].join("\n"), "yaml");
    expect(
      read([
        "  - name: both",
        "    steps: [{ name: s, http: { method: GET, path: / } }]",
        "    playwright: { spec: { path: a.spec.ts, source: x } }",
      ]),
    ).to.throw(
      "testCases[0].steps: must be left out of a Playwright spec case: a test case holds steps or a spec, not both",
    );
    expect(read(["  - name: no source", "    playwright: { spec: { path: a.spec.ts } }"])).to.throw(
      "testCases[0].playwright.spec.source: is required",
    );
    expect(
      read(["  - name: typo", "    playwright: { spec: { path: a.spec.ts, source: x }, file: [] }"]),
    ).to.throw("testCases[0].playwright.file: unknown field; expected one of: spec, files");
  });

  it("makes a folder one case per spec file, each with the helper files it imports, transitively", () => {
    const cases = specCasesOfFolder([
      { path: "tests/login.spec.ts", source: spec },
      {
        path: "tests/cart.test.js",
        source: 'const { test } = require("@playwright/test");\ntest("empty", () => {});',
      },
      {
        path: "pages/login.ts",
        source: 'import { Base } from "./base";\nexport class LoginPage extends Base {}',
      },
      { path: "pages/base.ts", source: "export class Base {}" },
      { path: "pages/unused.ts", source: "export const x = 1;" },
      { path: "data/users.json", source: '[{"name":"ann"}]' },
    ]);
    expect(cases.map((c) => [c.name, c.path, c.playwright.spec?.path])).to.deep.equal([
      ["tests/cart.test.js", "testCases[0]", "tests/cart.test.js"],
      ["tests/login.spec.ts", "testCases[1]", "tests/login.spec.ts"],
    ]);
    expect(cases[0]?.playwright.files).to.deep.equal([]);
    expect(cases[1]?.playwright.files.map((file) => file.path)).to.deep.equal([
      "pages/login.ts",
      "data/users.json",
      "pages/base.ts",
    ]);
    // A module name climbing above the folder, or naming a package, is no file of it.
    const files = new Map([
      ["a.spec.ts", 'import "../outside";\nimport x from "lodash";\nimport "./b.mjs";'],
      ["b.mjs", ""],
    ]);
    expect(helpersOf("a.spec.ts", files)).to.deep.equal(["b.mjs"]);
  });

  it("states each bound it finds passed, with the field it is under", () => {
    const problems: string[] = [];
    checkPlaywright(
      {
        spec: { path: "../x.spec.ts", source: "x".repeat(256 * 1024 + 1) },
        files: Array.from({ length: 21 }, (_, i) => ({ path: `h${i}.ts`, source: "" })),
      },
      "test_cases[0].playwright",
      (field, problem) => problems.push(`${field}: ${problem}`),
    );
    expect(problems).to.deep.equal([
      `test_cases[0].playwright.spec.path: must not contain ".." (a file stays inside the spec's folder)`,
      "test_cases[0].playwright.spec.source: must be at most 256 KiB (got 262145 bytes)",
      "test_cases[0].playwright.files: must hold at most 20 helper files (got 21)",
    ]);
  });
});
