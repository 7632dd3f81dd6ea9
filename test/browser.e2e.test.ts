// Browser tests through the whole system (docs/runs.md, "Browser steps"): the demo project's two
// browser test cases started over REST, run by the executor process in real Chromium through its
// egress proxy against the demo target's web app; what the browser saw comes back as artifacts at
// their REST url, to the project's keys only. And a browser test whose executor is killed mid-test
// still ends: its lease lapses and another executor takes it over.
import { type ServiceProcess, startServiceProcess } from "@testrun/testing";
import { expect } from "chai";
import { unzipSync } from "fflate";
import pg from "pg";
import type { Browser } from "playwright-core";
import { type Demo, seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, shot, viewports } from "./browser.js";
import { addCases, newProject, Pipeline, type RunBody, startTestSystem } from "./pipeline.js";

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const zipSignature = [0x50, 0x4b, 0x03, 0x04];

describe("browser tests through the whole system", function () {
  this.timeout(180_000);
  let system: System;
  let demo: Pipeline;
  let run: RunBody;
  let db: pg.Client;
  let seeded: Demo;
  let browser: Browser | undefined;

  before(async () => {
    system = await startTestSystem({
      serviceEnv: {
        // A killed executor's lease lapses within seconds and its test is published again at once.
        runs: { LEASE_MS: "2000", RECONCILE_INTERVAL_MS: "200", REPUBLISH_AFTER_MS: "300" },
        executor: { LEASE_MS: "2000" },
      },
    });
    db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    seeded = await seedDemo(system.env, system.demoTargetUrl);
    demo = new Pipeline(system.gatewayUrl, seeded.secret);
    const started = await demo.start({ tags: ["browser"] });
    run = await demo.finished(started.id);
  });
  after(async () => {
    await browser?.close();
    await db?.end();
    await system?.stop();
  });

  const testNamed = (name: string) => {
    const test = run.tests.find((t) => t.name === name);
    if (!test) throw new Error(`no test ${name} in ${JSON.stringify(run.tests.map((t) => t.name))}`);
    return test;
  };

  async function bytesOf(
    url: string,
    key: string,
  ): Promise<{ status: number; bytes: Uint8Array; type: string }> {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    return {
      status: res.status,
      bytes: new Uint8Array(await res.arrayBuffer()),
      type: res.headers.get("content-type") ?? "",
    };
  }

  it("passes the sign-in-and-order test and keeps its named screenshot", () => {
    const passed = testNamed("sign in and place an order");
    expect(passed.status, passed.summary).to.equal("PASSED");
    expect(passed.artifacts.map((a) => [a.kind, a.name, a.step])).to.deep.include([
      "screenshot",
      "order placed",
      13,
    ]);
    // No trace for a passed test unless asked for.
    expect(passed.artifacts.map((a) => a.kind)).to.not.include("trace");
  });

  it("fails the report test at its check, saying what the page showed instead", () => {
    expect(run.status).to.equal("FAILED");
    const failed = testNamed("the monthly report loads");
    expect(failed.status).to.equal("FAILED");
    expect(failed.summary).to.match(/^step 3 "report ready": expect getByTestId\('report-status'\) text: /);
  });

  it("serves the failure's screenshot, trace and log to the project's key, and 404 to another project's", async () => {
    const failed = testNamed("the monthly report loads");
    const byKind = new Map(failed.artifacts.map((a) => [a.kind, a]));
    const screenshot = failed.artifacts.find((a) => a.kind === "screenshot" && a.name === "failure");
    expect(screenshot?.step).to.equal(3);
    expect([...byKind.keys()].sort()).to.deep.equal(["browser_log", "screenshot", "trace"]);

    const png = await bytesOf(String(screenshot?.url), demo.key);
    expect(png.status).to.equal(200);
    expect(png.type).to.equal("image/png");
    expect([...png.bytes.slice(0, 8)]).to.deep.equal(pngSignature);
    expect(png.bytes.length).to.equal(screenshot?.size);

    const trace = await bytesOf(String(byKind.get("trace")?.url), demo.key);
    expect(trace.status).to.equal(200);
    expect([...trace.bytes.slice(0, 4)]).to.deep.equal(zipSignature);

    // The page's failed request (the report answers 500) is in its log.
    const log = await bytesOf(String(byKind.get("browser_log")?.url), demo.key);
    expect(new TextDecoder().decode(log.bytes)).to.include("500");

    const other = await newProject(system, "another project", { credits: 0 });
    const refused = await bytesOf(String(screenshot?.url), other.pipeline.key);
    expect(refused.status).to.equal(404);
  });

  for (const width of ["wide", "narrow"] as const)
    it(`shows the failed browser test at its run url: the failing step, its screenshot, the trace (${viewports[width].width} px)`, async () => {
      const failed = testNamed("the monthly report loads");
      browser ??= await launchBrowser();
      const context = await browser.newContext({ viewport: viewports[width] });
      try {
        const page = await context.newPage();
        await openSignInLink(page, system, seeded.ownerMemberId);
        await page.goto(failed.url);
        const failing = page
          .getByRole("listitem")
          .filter({ has: page.getByRole("heading", { name: "report ready" }) });
        await failing.getByText("Failed", { exact: true }).waitFor();
        await failing.getByText(/Why it failed: step 3 "report ready"/).waitFor();
        // The screenshot of the page at that moment, loaded through the member's session.
        const image = failing.getByRole("img", { name: /The page when the step failed/ });
        await image.waitFor();
        // Loaded, not a broken image: its natural size is the page's.
        type Picture = { complete: boolean; naturalWidth: number };
        await page.waitForFunction(
          (img) => (img as unknown as Picture).complete,
          await image.elementHandle(),
        );
        const naturalWidth = await image.evaluate((img) => (img as unknown as Picture).naturalWidth);
        expect(naturalWidth).to.be.greaterThan(100);
        // Steps that ran say how long they took.
        const first = page
          .getByRole("listitem")
          .filter({ has: page.getByRole("heading", { name: "open the reports page" }) });
        await first.getByText(/^\d+(\.\d)? (ms|s)$/).waitFor();
        await shot(page, `browser-test-failed`, width);
        if (width === "narrow") return;
        // "Open trace" opens the console's trace viewer on this test's trace.
        const [viewer] = await Promise.all([
          context.waitForEvent("page"),
          page.getByRole("link", { name: "Open trace" }).click(),
        ]);
        await viewer.getByText("getByRole('button', { name: 'Load report' })").first().waitFor();
        await shot(viewer, "browser-test-trace", "wide");
        // A resource the trace captured never opens as a page of the console's origin (it could be
        // HTML of the page under test's choosing): the viewer's worker refuses the navigation.
        const trace = failed.artifacts.find((a) => a.kind === "trace");
        const zip = await bytesOf(String(trace?.url), demo.key);
        const resource = Object.keys(unzipSync(zip.bytes)).find((name) => name.startsWith("resources/"));
        expect(resource, "the trace holds resources").to.be.a("string");
        const opened = await viewer.goto(
          `${system.consoleUrl}/trace-viewer/file/${resource?.slice("resources/".length)}`,
        );
        expect(opened?.status()).to.equal(403);
      } finally {
        await context.close();
      }
    });

  it("ends a browser test whose executor is killed mid-test: another executor takes it over", async () => {
    const { projectId, pipeline } = await newProject(system, "killed executor", { credits: 10 });
    await addCases(
      system,
      projectId,
      [
        "- name: waits for a text that never comes",
        "  tags: [killed]",
        "  steps:",
        "    - name: open",
        "      browser: { goto: { url: /login } }",
        "    - name: wait",
        "      browser: { waitFor: { text: never shown anywhere }, timeoutMs: 4000 }",
        "",
      ].join("\n"),
    );
    let successor: ServiceProcess | undefined;
    try {
      const started = await pipeline.start({ tags: ["killed"] });
      await pipeline.running(started.id);
      await system.processes.get("executor")?.stop("SIGKILL");
      successor = await startServiceProcess("executor", {
        ...system.executorEnv,
        PORT: "0",
        LEASE_MS: "2000",
      });
      system.processes.set("executor", successor);
      const ended = await pipeline.finished(started.id);
      const [test] = ended.tests;
      expect(test?.status).to.equal("FAILED");
      expect(test?.summary).to.match(/^step 2 "wait": .*never shown anywhere/);
      // The killed executor's claim lapsed; the result is a later attempt's (the REST API does not show it).
      const { rows } = await db.query("select attempt from runs.test_results where id = $1", [test?.id]);
      expect(rows[0]?.attempt).to.be.greaterThan(1);
    } finally {
      if (!successor) system.processes.delete("executor");
    }
  });
});
