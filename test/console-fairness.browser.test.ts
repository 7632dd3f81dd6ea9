// A run page when live updates are at capacity (docs/security.md, "Resource limits"): the console
// refuses the page's stream (RESOURCE_EXHAUSTED), and the page reads the run every few seconds
// instead and says so, rather than "reconnecting" forever. A real browser against the whole
// system; the bound is one live stream per project, held by another session of the test.
import { createCliContext, createEnvironment } from "@testrun/cli";
import { expect } from "chai";
import type { Browser } from "playwright-core";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, screenshot, viewports } from "./browser.js";
import { consoleClient, signIn } from "./console-client.js";
import { HeldTarget, heldCase } from "./held-target.js";
import { addCases, newProject, startTestSystem } from "./pipeline.js";

describe("console run page when live updates are at capacity", function () {
  this.timeout(90_000);
  let system: System;
  let browser: Browser;
  let target: HeldTarget;

  before(async () => {
    system = await startTestSystem({ serviceEnv: { console: { WATCH_STREAMS_PER_PROJECT: "1" } } });
    target = await HeldTarget.start();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await target?.stop();
    await system?.stop();
  });

  it("reads the run every few seconds, says so, and shows it finish", async () => {
    const project = await newProject(system, "Busy runs", { credits: 10 });
    await createEnvironment(createCliContext(system.env), {
      projectId: project.projectId,
      name: "held",
      baseUrl: target.url,
    });
    await addCases(system, project.projectId, heldCase("Held one", "held", "/hold/busy"));
    const release = target.hold("/hold/busy");
    const started = await project.pipeline.start({ tags: ["held"], environment: "held" });

    // Another session follows the run live and so holds the project's one stream.
    const elsewhere = new AbortController();
    const other = consoleClient(system, await signIn(system, project.ownerId));
    const live = other
      .watchRun({ projectId: project.projectId, runId: started.id }, { signal: elsewhere.signal })
      [Symbol.asyncIterator]();
    await live.next();

    const context = await browser.newContext({ viewport: viewports.wide });
    try {
      const page = await context.newPage();
      await openSignInLink(page, system, project.ownerId);
      await page.goto(started.url);
      await page.getByRole("heading", { level: 1, name: /Running$/ }).waitFor();
      await page
        .getByText(/live updates are at capacity, so this page reads the run every few seconds/)
        .waitFor();
      expect(await page.getByText(/reconnecting/).count()).to.equal(0);
      await screenshot(page, "run-busy-polling-1280");

      release();
      await page.getByRole("heading", { level: 1, name: /Passed$/ }).waitFor();
      await page
        .getByRole("row", { name: /Held one/ })
        .getByText("Passed", { exact: true })
        .waitFor();
      expect(await page.getByText(/at capacity/).count()).to.equal(0);
      await screenshot(page, "run-busy-finished-1280");
    } finally {
      elsewhere.abort();
      await context.close();
    }
  });
});
