// Versions of test cases and plans in the console, in a real browser against the whole system: a
// test page links to the version of the test case its run ran, even after the test case changed;
// that version opens read-only under a banner (which version of how many, from when, by whom) with
// a way to the current one; the current test case and a plan say their version and who changed
// them; a version not kept says so. At 1280 and 390 px; every page saved under .tmp/screenshots.
import { createCliContext, createTestPlan } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { horizontalOverflow, screenshot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { addCases, getCase } from "./pipeline.js";

describe("console versions of test cases in a browser", function () {
  this.timeout(90_000);
  const suite = consoleBrowserSuite("Acme versions", { credits: 10 });
  const px = (width: keyof typeof viewports) => viewports[width].width;
  const shot = async (page: Page, name: string, width: keyof typeof viewports) => {
    await screenshot(page, `${name}-${px(width)}`);
    expect(await horizontalOverflow(page), `${name} overflows`).to.be.at.most(0);
  };
  const ownerEmail = "owner@acme-versions.example";
  const anaEmail = "ana@acme-versions.example";
  let caseId: string;
  let planId: string;
  let testUrl: string;

  before(async () => {
    const { system, project } = suite;
    const ctx = createCliContext(system.env);
    const [created] = await addCases(system, project.projectId, getCase("Login", "smoke", "/health"));
    caseId = created?.id ?? "";
    planId = (
      await createTestPlan(ctx, { projectId: project.projectId, name: "Nightly", testCases: [caseId] })
    ).id;
    // Version 2, by the Owner: what the run below runs.
    const asMember = (memberId: string) => ({ kind: { case: "memberId" as const, value: memberId } });
    await ctx.catalog.updateTestCase({
      actor: asMember(project.ownerId),
      projectId: project.projectId,
      testCaseId: caseId,
      steps: {
        steps: [
          {
            name: "get the home page",
            kind: { case: "http", value: { request: { method: "GET", path: "/health" } } },
          },
        ],
      },
      expectedVersion: 1,
    });
    const run = await project.pipeline.start({ testCaseIds: [caseId] });
    const finished = await project.pipeline.finished(run.id);
    testUrl = finished.tests[0]?.url ?? "";
    // Then Ana changes it: version 3 is not what ran.
    const ana = (await suite.member(anaEmail, Role.EDITOR)).id;
    await ctx.catalog.updateTestCase({
      actor: asMember(ana),
      projectId: project.projectId,
      testCaseId: caseId,
      name: "Login (new flow)",
      steps: {
        steps: [
          {
            name: "open sign-in",
            kind: { case: "http", value: { request: { method: "GET", path: "/ok" } } },
          },
        ],
      },
      expectedVersion: 2,
    });
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`a test links to the version of the test case it ran, shown read-only under a banner (${px(width)} px)`, async () => {
      const page = await suite.signedIn(width, suite.project.ownerId);
      await page.goto(testUrl);
      const asRun = page.getByRole("link", { name: "Version 2 (as run)" });
      await asRun.waitFor();
      await shot(page, "test-result-version", width);

      await asRun.click();
      const banner = page.locator(".version-banner");
      await banner.waitFor();
      expect(new URL(page.url()).search).to.equal("?version=2");
      const said = (await banner.textContent()) ?? "";
      expect(said).to.match(
        new RegExp(
          `^You are looking at version 2 of 3, from .+, by Owner \\(${ownerEmail}\\)\\. It is read-only\\.`,
        ),
      );
      // Version 2's name and steps, not the current ones.
      expect(await page.locator("h1 > span").first().textContent()).to.equal("Login");
      expect(await page.getByText("get the home page").count()).to.equal(1);
      expect(await page.getByText("open sign-in").count()).to.equal(0);
      await shot(page, "test-case-old-version", width);

      await banner.getByRole("link", { name: "Go to the current version" }).click();
      await page.getByRole("heading", { name: "Login (new flow)", level: 1 }).waitFor();
      expect(await page.locator(".version-banner").count()).to.equal(0);
      expect(await page.locator(".version-line").textContent()).to.match(
        new RegExp(`^Version 3 · changed by ana \\(${anaEmail}\\), `),
      );
      await page.getByText("open sign-in").waitFor();
      await shot(page, "test-case-current-version", width);
    });

    it(`a plan says its version and who changed it; a version not kept says so (${px(width)} px)`, async () => {
      const page = await suite.signedIn(width, suite.project.ownerId);
      const { consoleUrl } = suite.system;
      const projectPath = `${consoleUrl}/projects/${suite.project.projectId}`;
      await page.goto(`${projectPath}/test-plans/${planId}`);
      await page.getByRole("heading", { name: "Nightly", level: 1 }).waitFor();
      expect(await page.locator(".version-line").textContent()).to.match(
        /^Version 1 · changed by an operator|^Version 1 · changed by operator /,
      );
      await shot(page, "test-plan-version", width);

      await page.goto(`${projectPath}/test-cases/${caseId}?version=9`);
      await page.getByRole("heading", { name: "Version not available" }).waitFor();
      await page.getByText(`test case ${caseId} has no version 9: it is at version 3`).waitFor();
      await shot(page, "test-case-version-missing", width);
      await page.getByRole("link", { name: "Go to the current version" }).click();
      await page.getByRole("heading", { name: "Login (new flow)", level: 1 }).waitFor();
    });
  }
});
