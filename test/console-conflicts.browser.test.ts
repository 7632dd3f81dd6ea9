// Two people editing the same test case or plan in the console, in a real browser against the
// whole system (two members, two browser contexts): the second save, made on the version both
// started from, is refused naming who saved which version and when; the refused draft stays in the
// editor, "Copy my changes" shows it, and "Reload the current version" replaces it with what is
// stored, which is exactly the first person's save. A delete made on an old version is refused the
// same way. One person saving twice in a row is no conflict. The plan editor holds unsaved changes.
// At 1280 and 390 px; the conflict dialog saved under .tmp/screenshots.

import type { Client } from "@connectrpc/connect";
import { createCliContext, createTestPlan } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { expect } from "chai";
import type { Locator, Page } from "playwright-core";
import { shot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { consoleClient, signIn } from "./console-client.js";
import { addCases, getCase } from "./pipeline.js";

describe("console edit conflicts in a browser", function () {
  this.timeout(120_000);
  const suite = consoleBrowserSuite("Acme conflicts", { credits: 0 });
  const px = (width: keyof typeof viewports) => viewports[width].width;
  const anaEmail = "ana@acme-conflicts.example";
  const benEmail = "ben@acme-conflicts.example";
  let ana: string;
  let ben: string;
  /** The console as Ana (a second writer outside the browser) and as the Owner (to read back). */
  let asAna: Client<typeof ConsoleService>;
  let owner: Client<typeof ConsoleService>;
  const projectPath = () => `${suite.system.consoleUrl}/projects/${suite.project.projectId}`;

  before(async () => {
    ana = (await suite.member(anaEmail, Role.EDITOR)).id;
    ben = (await suite.member(benEmail, Role.EDITOR)).id;
    asAna = consoleClient(suite.system, await signIn(suite.system, ana));
    owner = consoleClient(suite.system, await signIn(suite.system, suite.project.ownerId));
  });

  const newCase = async (name: string) => {
    const [created] = await addCases(suite.system, suite.project.projectId, getCase(name, "smoke", "/"));
    return created?.id ?? "";
  };
  const storedCase = async (testCaseId: string) => {
    const { testCase } = await owner.getTestCase({ projectId: suite.project.projectId, testCaseId });
    if (!testCase) throw new Error(`no test case ${testCaseId}`);
    return testCase;
  };
  const storedPlan = async (testPlanId: string) => {
    const answer = await owner.getTestPlan({ projectId: suite.project.projectId, testPlanId });
    if (!answer.testPlan) throw new Error(`no test plan ${testPlanId}`);
    return { ...answer.testPlan, caseNames: answer.testCases.map((c) => c.name) };
  };
  /** The page as signed in with the clipboard allowed (the console is on localhost: a secure context). */
  const editorPage = async (width: keyof typeof viewports, memberId: string) => {
    const page = await suite.signedIn(width, memberId);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    return page;
  };
  const stepNames = (page: Page) =>
    // A string, evaluated in the page: this file is compiled without the DOM's types.
    page.evaluate<string[]>(
      "[...document.querySelectorAll('.steps-editor .step-name-input')].map((input) => input.value)",
    );
  /** What the dialog says of who saved, and the exact time it names. */
  const said = async (where: Locator) => ({
    text: (await where.locator("p").first().textContent()) ?? "",
    at: await where.locator("time").first().getAttribute("datetime"),
  });
  const isoOf = (at: { seconds: bigint; nanos: number } | undefined) =>
    at ? new Date(Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6)).toISOString() : "";

  for (const width of ["wide", "narrow"] as const) {
    it(`a test case saved by two people: the second is refused with who and when, keeps the draft, copies it and reloads (${px(width)} px)`, async () => {
      const name = `Login ${width}`;
      const caseId = await newCase(name);
      const editUrl = `${projectPath()}/test-cases/${caseId}/edit`;
      const pageA = await editorPage(width, ana);
      const pageB = await editorPage(width, ben);
      for (const page of [pageA, pageB]) {
        await page.goto(editUrl);
        await page.getByRole("heading", { name: `Edit ${name}`, level: 1 }).waitFor();
        expect(await page.locator(".version-line").textContent()).to.match(/^Version 1 · changed /);
      }

      // Ana renames it and saves: version 2.
      await pageA.getByLabel("Name", { exact: true }).fill(`${name} (Ana)`);
      await pageA.getByRole("button", { name: "Save test case" }).click();
      await pageA.getByText(`${name} (Ana) saved.`).waitFor();
      const anas = await storedCase(caseId);
      expect(anas.version).to.equal(2);

      // Ben's page reads the test case again in the background (as when its window gets focus):
      // his editor still saves on version 1, the one his draft started from.
      const refetched = pageB.waitForResponse((answer) => answer.url().endsWith("/GetTestCase"));
      await pageB.evaluate("window.dispatchEvent(new Event('visibilitychange'))");
      await refetched;
      await pageB.locator(".steps-editor .step-name-input").first().fill("get it (Ben)");
      await pageB.getByRole("button", { name: "Save test case" }).click();
      const dialog = pageB.getByRole("dialog", { name: "Someone else saved this test case" });
      await dialog.waitFor();
      const first = await said(dialog);
      expect(first.text).to.match(
        new RegExp(
          `^ana \\(${anaEmail}\\) saved version 2 (at|on) .+; you started from version 1\\. Your changes are not saved\\.$`,
        ),
      );
      expect(first.at).to.equal(isoOf(anas.updatedAt));
      // Keeping the draft has focus: Enter loses nothing.
      expect(
        await dialog
          .getByRole("button", { name: "Keep editing" })
          .evaluate((el) => el === el.ownerDocument.activeElement),
      ).to.equal(true);
      await shot(pageB, "edit-conflict", width);

      // Ben's draft is still in the editor, and nothing of it was stored: the case is Ana's.
      expect(await pageB.getByLabel("Name", { exact: true }).inputValue()).to.equal(name);
      expect(await stepNames(pageB)).to.deep.equal(["get it (Ben)"]);
      const stored = await storedCase(caseId);
      expect(stored.version).to.equal(2);
      expect(stored.name).to.equal(`${name} (Ana)`);
      expect(stored.steps.map((step) => step.name)).to.deep.equal(["get it"]);
      expect(stored.updatedBy?.kind.case).to.equal("member");

      // Keep editing: the draft stays; the next save is refused the same way.
      await dialog.getByRole("button", { name: "Keep editing" }).click();
      await dialog.waitFor({ state: "hidden" });
      await pageB
        .locator(".conflict-notice")
        .getByText(/^Not saved: ana /)
        .waitFor();
      await pageB.getByRole("button", { name: "Save test case" }).click();
      await dialog.waitFor();
      expect((await storedCase(caseId)).version).to.equal(2);

      // Reloading before copying asks first; Back returns to the choices.
      await dialog.getByRole("button", { name: "Reload the current version" }).click();
      await dialog.getByText(/Reloading replaces your changes in the editor with version 2/).waitFor();
      await dialog.getByRole("button", { name: "Back" }).click();

      // Copy my changes: Ben's test case in the file format, on the clipboard and in the dialog.
      await dialog.getByRole("button", { name: "Copy my changes" }).click();
      const copied = dialog.getByLabel("Your changes");
      await copied.waitFor();
      const mine = JSON.parse(await copied.inputValue());
      expect(mine.name).to.equal(name);
      expect(mine.steps.map((step: { name: string }) => step.name)).to.deep.equal(["get it (Ben)"]);
      expect(await copied.getAttribute("readonly")).to.equal("");
      expect(await pageB.evaluate<string>("navigator.clipboard.readText()")).to.equal(
        await copied.inputValue(),
      );
      await dialog.getByText("Copied to the clipboard.", { exact: false }).waitFor();
      await shot(pageB, "edit-conflict-copied", width);

      // Copied: reloading needs no second question. The editor now holds Ana's version 2.
      await dialog.getByRole("button", { name: "Reload the current version" }).click();
      await dialog.waitFor({ state: "hidden" });
      await pageB.getByRole("heading", { name: `Edit ${name} (Ana)`, level: 1 }).waitFor();
      expect(await pageB.getByLabel("Name", { exact: true }).inputValue()).to.equal(`${name} (Ana)`);
      expect(await stepNames(pageB)).to.deep.equal(["get it"]);
      expect(await pageB.locator(".version-line").textContent()).to.match(
        new RegExp(`^Version 2 · changed by ana \\(${anaEmail}\\), `),
      );
      expect(await pageB.locator(".editor-actions").getByText("No changes").count()).to.equal(1);

      // Ben makes his change again on version 2: stored as version 3, Ana's name kept.
      await pageB.locator(".steps-editor .step-name-input").first().fill("get it (Ben)");
      await pageB.getByRole("button", { name: "Save test case" }).click();
      await pageB.getByText(`${name} (Ana) saved.`).waitFor();
      const merged = await storedCase(caseId);
      expect(merged.version).to.equal(3);
      expect(merged.name).to.equal(`${name} (Ana)`);
      expect(merged.steps.map((step) => step.name)).to.deep.equal(["get it (Ben)"]);
    });
  }

  it("one person saving a test case twice in a row is no conflict", async () => {
    const caseId = await newCase("Search twice");
    const page = await editorPage("wide", ana);
    for (const [i, name] of ["Search once", "Search twice again"].entries()) {
      await page.goto(`${projectPath()}/test-cases/${caseId}`);
      await page.getByRole("link", { name: "Edit", exact: true }).click();
      await page.getByLabel("Name", { exact: true }).fill(name);
      await page.getByRole("button", { name: "Save test case" }).click();
      await page.getByText(`${name} saved.`).waitFor();
      expect((await storedCase(caseId)).version).to.equal(i + 2);
    }
    // Without leaving the app in between: the case page, Edit, save.
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await page.getByLabel("Name", { exact: true }).fill("Search thrice");
    await page.getByRole("button", { name: "Save test case" }).click();
    await page.getByText("Search thrice saved.").waitFor();
    expect((await storedCase(caseId)).version).to.equal(4);
  });

  it("a plan reordered by one person after another renamed it: refused, kept, copied, reloaded; leaving unsaved asks (1280 px)", async () => {
    const ids = await Promise.all(["Plan first", "Plan second", "Plan third"].map(newCase));
    const ctx = createCliContext(suite.system.env);
    const planId = (
      await createTestPlan(ctx, { projectId: suite.project.projectId, name: "Nightly", testCases: ids })
    ).id;
    const editUrl = `${projectPath()}/test-plans/${planId}/edit`;
    const pageA = await editorPage("wide", ana);
    const pageB = await editorPage("wide", ben);
    for (const page of [pageA, pageB]) {
      await page.goto(editUrl);
      await page.getByRole("heading", { name: "Edit Nightly", level: 1 }).waitFor();
      expect(await page.locator(".version-line").textContent()).to.match(/^Version 1 · changed /);
    }
    await pageA.getByLabel("Name", { exact: true }).fill("Nightly (Ana)");
    await pageA.getByRole("button", { name: "Save test plan" }).click();
    await pageA.getByText("Test plan Nightly (Ana) saved.").waitFor();
    const anas = await storedPlan(planId);
    expect(anas.version).to.equal(2);

    await pageB.getByRole("button", { name: "Move Plan third up" }).click();
    await pageB.getByRole("button", { name: "Save test plan" }).click();
    const dialog = pageB.getByRole("dialog", { name: "Someone else saved this test plan" });
    await dialog.waitFor();
    const first = await said(dialog);
    expect(first.text).to.match(
      new RegExp(
        `^ana \\(${anaEmail}\\) saved version 2 (at|on) .+; you started from version 1\\. Your changes are not saved\\.$`,
      ),
    );
    expect(first.at).to.equal(isoOf(anas.updatedAt));
    await shot(pageB, "edit-conflict-plan", "wide");
    // Ben's order is still in the editor; the stored plan is exactly Ana's.
    const order = () => pageB.locator(".plan-case-name").allTextContents();
    expect(await order()).to.deep.equal(["Plan first", "Plan third", "Plan second"]);
    const stored = await storedPlan(planId);
    expect(stored.version).to.equal(2);
    expect(stored.name).to.equal("Nightly (Ana)");
    expect(stored.caseNames).to.deep.equal(["Plan first", "Plan second", "Plan third"]);

    await dialog.getByRole("button", { name: "Copy my changes" }).click();
    expect(await dialog.getByLabel("Your changes").inputValue()).to.equal(
      [
        "Name: Nightly",
        "Description: (none)",
        "Retries: each test case's own",
        "Test cases, in run order:",
        `1. Plan first (${ids[0]})`,
        `2. Plan third (${ids[2]})`,
        `3. Plan second (${ids[1]})`,
      ].join("\n"),
    );
    await dialog.getByRole("button", { name: "Reload the current version" }).click();
    await pageB.getByRole("heading", { name: "Edit Nightly (Ana)", level: 1 }).waitFor();
    expect(await order()).to.deep.equal(["Plan first", "Plan second", "Plan third"]);
    expect(await pageB.getByLabel("Name", { exact: true }).inputValue()).to.equal("Nightly (Ana)");

    // An unsaved change held: leaving for another page asks first, staying keeps it.
    await pageB.getByRole("button", { name: "Move Plan third up" }).click();
    await pageB.locator(".eyebrow").getByRole("link", { name: "Test plans" }).click();
    const leave = pageB.getByRole("dialog", { name: "Leave without saving?" });
    await leave.getByText("Your changes to “Nightly (Ana)” are not saved.").waitFor();
    await leave.getByRole("button", { name: "Stay and keep editing" }).click();
    expect(new URL(pageB.url()).pathname).to.match(/\/edit$/);
    await pageB.getByRole("button", { name: "Save test plan" }).click();
    await pageB.getByText("Test plan Nightly (Ana) saved.").waitFor();
    const merged = await storedPlan(planId);
    expect(merged.version).to.equal(3);
    expect(merged.caseNames).to.deep.equal(["Plan first", "Plan third", "Plan second"]);

    // Ben saves the plan a second time in a row: no conflict.
    await pageB.getByRole("link", { name: "Edit test plan" }).click();
    await pageB.getByLabel(/Description/).fill("Every night.");
    await pageB.getByRole("button", { name: "Save test plan" }).click();
    await pageB.getByText("Test plan Nightly (Ana) saved.").waitFor();
    expect((await storedPlan(planId)).version).to.equal(4);
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`a delete made on an old version is refused with who and when; nothing is deleted (${px(width)} px)`, async () => {
      const caseId = await newCase(`Doomed ${width}`);
      const ctx = createCliContext(suite.system.env);
      const planId = (
        await createTestPlan(ctx, {
          projectId: suite.project.projectId,
          name: `Doomed plan ${width}`,
          testCases: [caseId],
        })
      ).id;
      const page = await editorPage(width, ben);
      const { projectId } = suite.project;

      // The test case: Ben's page shows version 1; Ana renames it meanwhile.
      await page.goto(`${projectPath()}/test-cases/${caseId}`);
      await page.getByRole("heading", { name: `Doomed ${width}`, level: 1 }).waitFor();
      await asAna.updateTestCase({
        projectId,
        testCaseId: caseId,
        name: `Kept ${width}`,
        expectedVersion: 1,
      });
      await page.locator(".page-actions").getByRole("button", { name: "Delete" }).click();
      const confirm = page.getByRole("dialog", { name: `Delete Doomed ${width}?` });
      await confirm.getByRole("button", { name: "Delete test case" }).click();
      const refused = confirm.getByRole("alert");
      await refused.waitFor();
      expect(await refused.textContent()).to.match(
        new RegExp(
          `^ana \\(${anaEmail}\\) saved version 2 (at|on) .+; this page showed version 1\\. Nothing was deleted`,
        ),
      );
      const kept = await storedCase(caseId);
      expect(await refused.locator("time").getAttribute("datetime")).to.equal(isoOf(kept.updatedAt));
      expect(kept.name).to.equal(`Kept ${width}`);
      await shot(page, "delete-conflict", width);
      await confirm.getByRole("button", { name: "Look at the current version" }).click();
      await page.getByRole("heading", { name: `Kept ${width}`, level: 1 }).waitFor();
      expect(await page.locator(".version-line").textContent()).to.match(/^Version 2 · changed by ana /);

      // The plan: the same.
      await page.goto(`${projectPath()}/test-plans/${planId}`);
      await page.getByRole("heading", { name: `Doomed plan ${width}`, level: 1 }).waitFor();
      await asAna.updateTestPlan({
        projectId,
        testPlanId: planId,
        name: `Kept plan ${width}`,
        expectedVersion: 1,
      });
      await page.getByRole("button", { name: "Delete test plan" }).click();
      const confirmPlan = page.getByRole("dialog", { name: `Delete Doomed plan ${width}?` });
      await confirmPlan.getByRole("button", { name: "Delete test plan" }).click();
      await confirmPlan
        .getByText(/saved version 2 .+; this page showed version 1\. Nothing was deleted/)
        .waitFor();
      expect((await storedPlan(planId)).name).to.equal(`Kept plan ${width}`);
      await confirmPlan.getByRole("button", { name: "Look at the current version" }).click();
      await page.getByRole("heading", { name: `Kept plan ${width}`, level: 1 }).waitFor();
      // On the current version, the delete goes through.
      await page.getByRole("button", { name: "Delete test plan" }).click();
      await page
        .getByRole("dialog", { name: `Delete Kept plan ${width}?` })
        .getByRole("button", { name: "Delete test plan" })
        .click();
      await page.getByRole("heading", { name: "Test plans", level: 1 }).waitFor();
    });
  }
});
