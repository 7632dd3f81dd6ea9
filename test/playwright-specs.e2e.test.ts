// A Playwright spec case through the whole system (docs/runs.md, "Playwright specs"): created by a
// member, started over REST, run by the executor process with @playwright/test's runner against
// the demo target's web app through the egress proxy; each test() is one step result with its
// title, the failed one's error, its trace kept, and the project variable the spec reads absent
// from everything stored and served.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createCliContext, setVariable } from "@testrun/cli";
import { KeyKind } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { expect } from "chai";
import { unzipSync } from "fflate";
import pg from "pg";
import type { Browser } from "playwright-core";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, shot, viewports } from "./browser.js";
import { newProject, type Pipeline, sharedTestSystem } from "./pipeline.js";
import { cliEnv, runCli } from "./testrun-cli.js";

const password = "s3cret-Spec-Value-7731";
const spec = `import { test, expect } from "@playwright/test";
test("opens the shop", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveTitle(/Demo shop/);
});
test("signs in with the password", async ({ page }) => {
  await page.goto("/?as=" + process.env.SHOP_PASSWORD);
  throw new Error("sign-in refused for " + process.env.SHOP_PASSWORD);
});
test("links to the reports", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("link", { name: "Reports" }).first()).toBeVisible();
});
`;

interface SpecStep {
  number: number;
  status: string;
  name: string | null;
  error: string | null;
}

describe("a Playwright spec case through the whole system", function () {
  this.timeout(120_000);
  let system: System;
  let pipeline: Pipeline;
  let projectId: string;
  let ownerId: string;
  let testUrl = "";
  let browser: Browser | undefined;

  before(async () => {
    system = await sharedTestSystem();
    const project = await newProject(system, "playwright specs", { credits: 50 });
    ({ pipeline, projectId, ownerId } = project);
    const ctx = createCliContext(system.env);
    await setVariable(ctx, { projectId, name: "SHOP_PASSWORD", value: password });
    await ctx.catalog.createTestCase({
      actor: { kind: { case: "memberId", value: project.ownerId } },
      projectId,
      name: "shop spec",
      tags: ["spec"],
      playwright: { spec: { path: "tests/shop.spec.ts", source: spec } },
    });
  });
  after(async () => {
    await browser?.close();
  });

  it("reports three named step results, the failed one's redacted error and its trace, and stores the variable nowhere", async () => {
    const run = await pipeline.finished((await pipeline.start({ tags: ["spec"] })).id);
    const [test] = run.tests;
    expect(test?.status, test?.summary).to.equal("FAILED");
    testUrl = test?.url ?? "";
    expect(test?.summary).to.equal(
      'test 2 "signs in with the password" failed: Error: sign-in refused for {{SHOP_PASSWORD}}',
    );
    const steps = (test as unknown as { stepResults: SpecStep[] }).stepResults;
    expect(steps.map((s) => [s.number, s.status, s.name, s.error])).to.deep.equal([
      [1, "PASSED", "opens the shop", null],
      [2, "FAILED", "signs in with the password", "Error: sign-in refused for {{SHOP_PASSWORD}}"],
      [3, "PASSED", "links to the reports", null],
    ]);
    expect((test as unknown as { failedStep: number }).failedStep).to.equal(2);

    // The failed test()'s trace, served to the project's key: a zip without the value.
    const trace = test?.artifacts.find((a) => a.kind === "trace");
    expect(trace?.step).to.equal(2);
    const answer = await fetch(String(trace?.url), { headers: { authorization: `Bearer ${pipeline.key}` } });
    expect(answer.status).to.equal(200);
    const zip = new Uint8Array(await answer.arrayBuffer());
    const entries = unzipSync(zip);
    expect(Object.keys(entries).length).to.be.greaterThan(0);
    const text = Object.values(entries)
      .map((bytes) => new TextDecoder().decode(bytes))
      .join("\n");
    expect(text, "the trace saw the page it opened").to.include("as=");
    expect(text).to.not.include(password);

    // Nothing stored by the runs service holds it: every row of its schema, artifact bytes included.
    const db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    try {
      const { rows: tables } = await db.query<{ name: string }>(
        "select table_name as name from information_schema.tables where table_schema = 'runs' and table_type = 'BASE TABLE'",
      );
      for (const { name } of tables) {
        const { rows } = await db.query<{ row: string }>(`select t::text as row from runs."${name}" t`);
        for (const { row } of rows) {
          expect(row, name).to.not.include(password);
          expect(row, name).to.not.include(Buffer.from(password).toString("hex"));
        }
      }
    } finally {
      await db.end();
    }
    for (const body of pipeline.responses) expect(body).to.not.include(password);
  });

  it("runs a new user's repository as docs/pipelines.md shows it: testrun push --tags, then testrun run --tags, the failed spec with its trace", async () => {
    // The example of "Pushing specs": two specs, a page object one of them imports, a config left out.
    const repository = await mkdtemp(join(tmpdir(), "testrun-e2e-repo-"));
    const files: Record<string, string> = {
      "e2e/login.spec.ts": `import { test, expect } from "@playwright/test";
import { ShopPage } from "./pages/shop";
test("logs in", async ({ page }) => {
  await new ShopPage(page).open();
  await expect(page).toHaveTitle(/Demo shop/);
});
`,
      "e2e/checkout.spec.ts": `import { test } from "@playwright/test";
test("pays by card", async ({ page }) => {
  await page.goto("/");
  throw new Error("the card form is missing");
});
`,
      "e2e/pages/shop.ts": `export class ShopPage {
  constructor(private readonly page: import("@playwright/test").Page) {}
  async open() { await this.page.goto("/"); }
}
`,
      "e2e/playwright.config.ts": "export default { workers: 8 };\n",
    };
    try {
      for (const [path, source] of Object.entries(files)) {
        await mkdir(dirname(join(repository, path)), { recursive: true });
        await writeFile(join(repository, path), source);
      }
      const { secret: contentToken } = await createCliContext(system.env).keys.createKey({
        actor: { kind: { case: "memberId", value: ownerId } },
        projectId,
        name: "push from CI",
        kind: KeyKind.CONTENT_TOKEN,
      });
      const pushed = await runCli(["push", join(repository, "e2e"), "--tags", "e2e"], {
        PATH: String(process.env.PATH),
        TESTRUN_URL: system.gatewayUrl,
        TESTRUN_CONTENT_TOKEN: contentToken,
      });
      expect(pushed.code, pushed.stderr).to.equal(0);
      expect(pushed.stdout).to.contain("Pushing 2 spec files (with 1 helper file)");
      expect(pushed.stdout).to.contain("Pushed 2 specs: 2 created, 0 updated, 0 unchanged.");
      expect(pushed.stdout + pushed.stderr).to.not.include(contentToken);

      const ran = await runCli(
        ["run", "--tags", "e2e", "--json", "-"],
        cliEnv(system.gatewayUrl, pipeline.key),
      );
      expect(ran.code, ran.stderr).to.equal(1);
      const run = JSON.parse(ran.stdout) as {
        status: string;
        tests: { name: string; status: string; summary: string; artifacts: { kind: string }[] }[];
      };
      expect(run.status).to.equal("FAILED");
      expect(run.tests.map((t) => [t.name, t.status, t.summary])).to.have.deep.members([
        ["checkout.spec.ts", "FAILED", 'test 1 "pays by card" failed: Error: the card form is missing'],
        ["login.spec.ts", "PASSED", "1 test passed"],
      ]);
      // The failed spec's trace is kept, as the console's run page shows it.
      const failed = run.tests.find((t) => t.status === "FAILED");
      expect(failed?.artifacts.map((a) => a.kind)).to.include("trace");
    } finally {
      await rm(repository, { recursive: true, force: true });
    }
  });

  for (const width of ["wide", "narrow"] as const)
    it(`lists the spec's test()s by their titles on the console's test page, the error under the failed one (${viewports[width].width} px)`, async () => {
      browser ??= await launchBrowser();
      const context = await browser.newContext({ viewport: viewports[width] });
      try {
        const page = await context.newPage();
        await openSignInLink(page, system, ownerId);
        await page.goto(testUrl);
        const item = (name: string) =>
          page.getByRole("listitem").filter({ has: page.getByRole("heading", { name }) });
        await item("opens the shop").getByText("Passed", { exact: true }).waitFor();
        const failed = item("signs in with the password");
        await failed.getByText("Failed", { exact: true }).waitFor();
        await failed
          .getByText("Why it failed: Error: sign-in refused for {{SHOP_PASSWORD}}", { exact: true })
          .waitFor();
        await item("links to the reports").getByText("Passed", { exact: true }).waitFor();
        await page.getByText("Failed at test 2 of 3.").waitFor();
        expect(await page.content()).to.not.include(password);
        await shot(page, "spec-test-result", width);
      } finally {
        await context.close();
      }
    });
});
