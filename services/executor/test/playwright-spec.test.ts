// Playwright specs run by @playwright/test's runner (src/playwright): each test() one step result,
// its error redacted, a failed test's trace kept and redacted, helper files imported, a spec that
// does not load or outlives its deadline said so.
import { create } from "@bufbuild/protobuf";
import { PlaywrightFileSchema, PlaywrightSpecSchema } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import { expect } from "chai";
import { unzipSync } from "fflate";
import { ArtifactKind } from "../src/browser/artifacts.js";
import { runSpec, type SpecRunOptions } from "../src/playwright/run-spec.js";
import { layOutSpec } from "../src/playwright/workspace.js";
import { type BrowserTarget, chromiumPath, startBrowserTarget } from "./browser-target.js";

const file = (path: string, source: string) => create(PlaywrightFileSchema, { path, source });
const specOf = (source: string, files: { path: string; source: string }[] = []) =>
  create(PlaywrightSpecSchema, {
    spec: file("tests/app.spec.ts", source),
    files: files.map((f) => file(f.path, f.source)),
  });

describe("Playwright specs run by @playwright/test's runner", function () {
  this.timeout(60_000);
  let target: BrowserTarget;
  const secret = "Hunter2Secret9";
  const options = (): SpecRunOptions => ({
    baseUrl: target.url,
    variables: { PASSWORD: secret },
    deadlineMs: 20_000,
    chromiumPath,
    chromiumArgs: ["--no-sandbox"],
    traceMaxBytes: 32 * 1024 * 1024,
  });
  before(async () => {
    target = await startBrowserTarget();
  });
  after(async () => {
    await target?.close();
  });

  it("reports each test() as a step, the failed one's error with the variable as {{NAME}}, and its redacted trace", async () => {
    const outcome = await runSpec(
      specOf(`import { test, expect } from "@playwright/test";
test("opens the page", async ({ page }) => {
  await page.goto("/typed");
  await expect(page).toHaveTitle("Typed");
});
test.describe("typing", () => {
  test("echoes the password", async ({ page }) => {
    await page.goto("/typed");
    await page.fill("#text", process.env.PASSWORD ?? "");
    expect(await page.textContent("#echoed")).toBe("something else than " + process.env.PASSWORD);
  });
});
test("adds up", async () => {
  expect(1 + 1).toBe(2);
});
`),
      options(),
    );
    expect(outcome.steps.map((s) => [s.number, s.name, s.passed])).to.deep.equal([
      [1, "opens the page", true],
      [2, "typing › echoes the password", false],
      [3, "adds up", true],
    ]);
    expect(outcome).to.include({ passed: false, failedStep: 2, cause: "assertion" });
    expect(outcome.summary).to.match(/^test 2 "typing › echoes the password" failed: /);
    expect(outcome.steps[1]?.error).to.be.a("string");
    expect(JSON.stringify(outcome.steps) + outcome.summary).not.to.contain(secret);

    const traces = outcome.artifacts.filter((a) => a.kind === ArtifactKind.TRACE);
    expect(traces.map((t) => t.step)).to.deep.equal([2]);
    const entries = unzipSync(traces[0]?.content ?? new Uint8Array());
    expect(Object.keys(entries).filter((name) => name.endsWith(".trace"))).not.to.deep.equal([]);
    // Nothing of the value in any entry, and no pictures: a picture cannot be redacted.
    for (const [name, bytes] of Object.entries(entries)) {
      expect(Buffer.from(bytes).toString("latin1"), name).not.to.contain(secret);
      expect(name).not.to.match(/\.(png|jpe?g)$/);
    }
  });

  it("passes a spec whose tests import its helper files", async () => {
    const outcome = await runSpec(
      specOf(
        `import { test, expect } from "@playwright/test";
import { TypedPage } from "../pages/typed";
import data from "../data/words.json";
test("types through a page object", async ({ page }) => {
  const typed = new TypedPage(page);
  await typed.open();
  await typed.type(data.word);
  await expect(page.locator("#echoed")).toHaveText(data.word);
});
test.skip("not today", async () => {});
`,
        [
          {
            path: "pages/typed.ts",
            source: `import type { Page } from "@playwright/test";
export class TypedPage {
  constructor(private readonly page: Page) {}
  open() { return this.page.goto("/typed"); }
  type(text: string) { return this.page.fill("#text", text); }
}
`,
          },
          { path: "data/words.json", source: `{ "word": "hello" }` },
        ],
      ),
      options(),
    );
    expect(outcome).to.include({ passed: true, failedStep: 0, summary: "1 test passed, 1 skipped" });
    expect(outcome.steps.map((s) => [s.name, s.passed, s.skipped])).to.deep.equal([
      ["types through a page object", true, false],
      ["not today", true, true],
    ]);
    expect(outcome.artifacts).to.deep.equal([]);
  });

  it("says a spec that does not load did not load, with no step", async () => {
    const outcome = await runSpec(
      specOf(`import { test } from "@playwright/test";\ntest("x", async () => {\n`),
      options(),
    );
    expect(outcome.passed).to.equal(false);
    expect(outcome.failedStep).to.equal(0);
    expect(outcome.summary).to.match(/^the spec did not load: /);
  });

  it("stops a spec at the test's deadline and says it timed out", async () => {
    const outcome = await runSpec(
      specOf(`import { test } from "@playwright/test";
test("spins", async () => { for (;;) {} });
`),
      { ...options(), deadlineMs: 2_000 },
    );
    expect(outcome).to.include({
      passed: false,
      cause: "timeout",
      summary: "the spec ran past the test's deadline of 2000 ms",
    });
    expect(outcome.durationMs).to.be.below(15_000);
  });

  it("refuses a file whose path leaves the spec's folder", async () => {
    const spec = specOf(`import { test } from "@playwright/test";`, [
      { path: "../../outside.ts", source: "x" },
    ]);
    const laid = layOutSpec(spec, {
      baseUrl: target.url,
      deadlineMs: 1000,
      chromiumPath,
      chromiumArgs: [],
      recordTrace: false,
    });
    await laid.then(
      () => expect.fail("laid out"),
      (error: Error) => expect(error.message).to.match(/leaves its folder/),
    );
  });
});
