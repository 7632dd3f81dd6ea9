// Test plans authored in the console, in a real browser against the whole system: an Editor creates
// a plan of three test cases picked from the searchable list, reorders them with the keyboard
// (Alt+↑/↓, announced) and saves; renames and describes it (an over-long name refused at its
// field); deletes one after being told what happens, and its run keeps its results. A plan cannot
// grow past 500 test cases, and the editor says so. A Viewer sees no edit controls and the
// console's API refuses the Viewer's changes. At 1280 and 390 px; pages and dialogs saved under
// .tmp/screenshots.
import { Code } from "@connectrpc/connect";
import { createCliContext } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import type { Locator, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { errorAt, expectNoErrorAt, shot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { consoleClient, refusal, signIn } from "./console-client.js";
import { addCases, getCase, newProject, type TestProject } from "./pipeline.js";

describe("console test plans in a browser", function () {
  this.timeout(120_000);
  const suite = consoleBrowserSuite("Acme plans", { credits: 20 });
  const { signedIn, member } = suite;
  let system: System;
  let acme: TestProject;
  /** The project's test cases by name. */
  const caseIds = new Map<string, string>();
  before(async () => {
    ({ system, project: acme } = suite);
    const created = await addCases(
      system,
      acme.projectId,
      getCase("Login", "smoke", "/") +
        getCase("Search", "smoke", "/") +
        getCase("Checkout", "shop", "/") +
        `- name: Legacy export\n  enabled: false\n  steps:\n    - name: get it\n      http: { method: GET, path: "/" }\n      expect: { status: 200 }\n`,
    );
    for (const testCase of created) caseIds.set(testCase.name, testCase.id);
  });
  const px = (width: keyof typeof viewports) => viewports[width].width;
  const plansUrl = () => `${system.consoleUrl}/projects/${acme.projectId}/test-plans`;
  /** The editor's list of the plan's test cases, and their names in run order. */
  const chosenList = (page: Page) => page.getByRole("list", { name: "Test cases, in run order" });
  const chosenNames = (list: Locator) => list.locator(".plan-case-name").allInnerTexts();
  /** The names in a plan page's table, in run order. */
  const tableNames = (page: Page) => page.locator("table tbody td.cell-strong").allInnerTexts();
  /** The picker's checkbox of a test case (its label: the name, then tags and state). */
  const pick = (picker: Locator, name: string) =>
    picker.getByRole("checkbox", { name: new RegExp(`^${name}\\b`) });
  const focusedLabel = (page: Page) =>
    page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label') ?? null");
  const spoken = (page: Page) => page.locator('.plan-form [role="status"][aria-live="polite"]');
  const editorClient = async (email: string) =>
    consoleClient(system, await signIn(system, (await member(email, Role.EDITOR)).id));

  for (const width of ["wide", "narrow"] as const) {
    it(`an Editor creates a plan of three test cases, reorders them with the keyboard, and the plan page shows that order (${px(width)} px)`, async () => {
      const editor = await member(`plan-editor-${width}@acme.example`, Role.EDITOR);
      const page = await signedIn(width, editor.id);
      await page.goto(plansUrl());
      await page.getByRole("heading", { name: "Test plans", level: 1 }).waitFor();
      await page.getByRole("link", { name: "New test plan" }).first().click();
      await page.getByRole("heading", { name: "New test plan", level: 1 }).waitFor();
      const picker = page.getByRole("region", { name: "Add test cases" });
      await pick(picker, "Checkout").waitFor();
      await shot(page, "plan-new-empty", width);

      // Nothing typed: the catalog's "is required" at the Name field, where focus goes.
      await page.getByRole("button", { name: "Create test plan" }).click();
      const name = page.getByLabel("Name", { exact: true });
      await page.locator(".field-error").waitFor();
      expect(await errorAt(name)).to.equal("Is required.");
      expect(await name.evaluate((el) => el === el.ownerDocument.activeElement)).to.equal(true);
      await shot(page, "plan-name-required", width);

      const planName = `Smoke ${width}`;
      await name.fill(planName);
      await expectNoErrorAt(name);
      expect(await page.locator(".field-error").count()).to.equal(0);
      await shot(page, "plan-name-required-fixed", width);
      await page.getByLabel(/Description/).fill("Every deploy, before traffic moves.");
      // Picked in this order; the search narrows the list to what matches.
      for (const picked of ["Login", "Search"]) await pick(picker, picked).check();
      await picker.getByLabel("Search test cases by name").fill("check");
      await pick(picker, "Login").waitFor({ state: "detached" });
      expect(await picker.getByRole("checkbox").count()).to.equal(1);
      await pick(picker, "Checkout").check();
      await picker.getByLabel("Search test cases by name").fill("");
      // A disabled case shows as disabled, with what a plan's run does with it.
      await pick(picker, "Legacy export").check();
      const list = chosenList(page);
      expect(await chosenNames(list)).to.deep.equal([
        "Login",
        "Search",
        "Checkout",
        "Legacy export Disabled",
      ]);
      await page.getByText("1 disabled test case: runs of the plan leave it out.").waitFor();
      await list.getByRole("button", { name: "Remove Legacy export" }).click();
      expect(await chosenNames(list)).to.deep.equal(["Login", "Search", "Checkout"]);

      // Keyboard: Checkout's row to the top with Alt+↑ twice; focus stays on it; each move is spoken.
      await list.getByRole("listitem", { name: "Checkout, 3 of 3" }).focus();
      await page.keyboard.press("Alt+ArrowUp");
      await page.keyboard.press("Alt+ArrowUp");
      expect(await chosenNames(list)).to.deep.equal(["Checkout", "Login", "Search"]);
      expect(await focusedLabel(page)).to.equal("Checkout, 1 of 3");
      expect(await spoken(page).textContent()).to.equal("Checkout moved to position 1 of 3.");
      await page.keyboard.press("Alt+ArrowUp");
      expect(await spoken(page).textContent()).to.equal("Checkout is already first.");
      // ↓ alone goes to the next row; Alt+↓ moves Login last.
      await page.keyboard.press("ArrowDown");
      expect(await focusedLabel(page)).to.equal("Login, 2 of 3");
      await page.keyboard.press("Alt+ArrowDown");
      expect(await chosenNames(list)).to.deep.equal(["Checkout", "Search", "Login"]);
      expect(await focusedLabel(page)).to.equal("Login, 3 of 3");
      expect(await spoken(page).textContent()).to.equal("Login moved to position 3 of 3.");
      // The buttons move too, and keep focus on the button pressed.
      const down = list.getByRole("button", { name: "Move Checkout down" });
      await down.click();
      expect(await chosenNames(list)).to.deep.equal(["Search", "Checkout", "Login"]);
      expect(await down.evaluate((el) => el === el.ownerDocument.activeElement)).to.equal(true);
      await list.getByRole("button", { name: "Move Checkout up" }).click();
      expect(await chosenNames(list)).to.deep.equal(["Checkout", "Search", "Login"]);
      await shot(page, "plan-new-filled", width);

      await page.getByRole("button", { name: "Create test plan" }).click();
      await page.getByRole("heading", { name: planName, level: 1 }).waitFor();
      await page.getByText(`Test plan ${planName} created.`).waitFor();
      expect(await tableNames(page)).to.deep.equal(["Checkout", "Search", "Login"]);
      await page.getByText("Every deploy, before traffic moves.").waitFor();
      await shot(page, "plan-created", width);
      // As stored by the catalog, in that order.
      const planId = new URL(page.url()).pathname.split("/").pop() ?? "";
      const stored = await (await editorClient(`plan-check-${width}@acme.example`)).getTestPlan({
        projectId: acme.projectId,
        testPlanId: planId,
      });
      expect(stored.testPlan?.testCaseIds).to.deep.equal(
        ["Checkout", "Search", "Login"].map((n) => caseIds.get(n)),
      );
    });

    it(`an Editor renames and describes a plan, and an over-long name is refused at its field (${px(width)} px)`, async () => {
      const client = await editorClient(`plan-renamer-${width}@acme.example`);
      const [temporary] = await addCases(system, acme.projectId, getCase(`Temporary ${width}`, "temp", "/"));
      const { testPlan } = await client.createTestPlan({
        projectId: acme.projectId,
        name: `Nightly ${width}`,
        testCaseIds: ["Search", "Login"].map((n) => caseIds.get(n) ?? ""),
      });
      const editor = await member(`plan-editor-2-${width}@acme.example`, Role.EDITOR);
      const page = await signedIn(width, editor.id);
      await page.goto(`${plansUrl()}/${testPlan?.id}`);
      await page.getByRole("link", { name: "Edit test plan" }).click();
      await page.getByRole("heading", { name: `Edit Nightly ${width}`, level: 1 }).waitFor();
      const list = chosenList(page);
      expect(await chosenNames(list)).to.deep.equal(["Search", "Login"]);

      // A test case picked here and deleted elsewhere before the save: the editor names it.
      await pick(page.getByRole("region", { name: "Add test cases" }), `Temporary ${width}`).check();
      const cli = createCliContext(system.env);
      await cli.catalog.deleteTestCase({
        actor: cli.actor,
        projectId: acme.projectId,
        testCaseId: temporary?.id ?? "",
      });
      await page.getByRole("button", { name: "Save test plan" }).click();
      await page
        .getByRole("alert")
        .getByText(`“Temporary ${width}” was deleted since it was picked: remove it and save again.`)
        .waitFor();
      await shot(page, "plan-edit-case-deleted", width);
      await list.getByRole("button", { name: `Remove Temporary ${width}` }).click();
      // Removed, it is no longer said to be missing.
      expect(await page.getByRole("alert").count()).to.equal(0);
      // And the list to pick from was read again: it no longer offers the deleted case.
      await pick(page.getByRole("region", { name: "Add test cases" }), `Temporary ${width}`).waitFor({
        state: "detached",
      });

      const name = page.getByLabel("Name", { exact: true });
      await name.fill("N".repeat(201));
      await page.getByRole("button", { name: "Save test plan" }).click();
      await page.locator(".field-error").waitFor();
      expect(await errorAt(name)).to.equal("Must be at most 200 characters.");
      expect(await page.getByLabel(/Description/).getAttribute("aria-invalid")).to.equal(null);
      await shot(page, "plan-edit-name-too-long", width);

      await name.fill(`Nightly ${width} renamed`);
      await expectNoErrorAt(name);
      expect(await page.locator(".field-error").count()).to.equal(0);
      await page.getByLabel(/Description/).fill("Runs every night against staging.");
      // Retries: each test case's own until the plan sets them; set, they replace them.
      const retries = page.getByLabel("Retries", { exact: true });
      expect(await retries.inputValue()).to.equal("");
      await retries.selectOption({ label: "2 retries" });
      await shot(page, "plan-edit-retries", width);
      await page.getByRole("button", { name: "Save test plan" }).click();
      await page.getByRole("heading", { name: `Nightly ${width} renamed`, level: 1 }).waitFor();
      await page.getByText(`Test plan Nightly ${width} renamed saved.`).waitFor();
      await page.getByText("Runs every night against staging.").waitFor();
      await page.getByText("retries: 2 retries for every test case").waitFor();
      const saved = await cli.catalog.getTestPlan({
        actor: cli.actor,
        projectId: acme.projectId,
        testPlanId: testPlan?.id ?? "",
      });
      expect(saved.testPlan?.retries, "stored as the plan's").to.equal(2);
      expect(await tableNames(page)).to.deep.equal(["Search", "Login"]);
      // The list shows it under its new name.
      await page.getByRole("link", { name: "Test plans" }).first().click();
      await page.getByRole("link", { name: `Nightly ${width} renamed` }).waitFor();
    });

    it(`an Editor deletes a plan after being told what happens; its run keeps its results and names it by id (${px(width)} px)`, async () => {
      const client = await editorClient(`plan-deleter-${width}@acme.example`);
      const planName = `Release ${width}`;
      const { testPlan } = await client.createTestPlan({
        projectId: acme.projectId,
        name: planName,
        testCaseIds: [caseIds.get("Login") ?? ""],
      });
      const planId = testPlan?.id ?? "";
      const run = await acme.pipeline.start({ testPlan: planName });
      const finished = await acme.pipeline.finished(run.id);

      const editor = await member(`plan-editor-3-${width}@acme.example`, Role.EDITOR);
      const page = await signedIn(width, editor.id);
      await page.goto(`${plansUrl()}/${planId}`);
      await page.getByRole("button", { name: "Delete test plan" }).click();
      const confirm = page.getByRole("dialog", { name: `Delete ${planName}?` });
      await confirm.getByText("Its 1 test case stays in the project: only the plan goes.").waitFor();
      await confirm
        .getByText(/Runs started from it, finished or still running, keep their tests and results/)
        .waitFor();
      await confirm.getByText(/start it by name or id get “not found” \(404\)/).waitFor();
      await shot(page, "plan-delete-confirm", width);
      await confirm.getByRole("button", { name: "Delete test plan" }).click();
      await page.getByText(`Test plan ${planName} deleted.`).waitFor();
      expect(new URL(page.url()).pathname).to.equal(`/projects/${acme.projectId}/test-plans`);
      expect(await page.getByRole("link", { name: planName }).count()).to.equal(0);
      await shot(page, "plans-after-delete", width);

      // What the dialog said: the test case stays, the run keeps its results under the plan's id,
      // and starting the plan by name is 404.
      expect(
        (await client.getTestCase({ projectId: acme.projectId, testCaseId: caseIds.get("Login") })).testCase
          ?.name,
      ).to.equal("Login");
      await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/runs/${run.id}`);
      await page.getByRole("link", { name: planId }).waitFor();
      const kept = await acme.pipeline.getRun(run.id);
      expect([kept.status, kept.tests.map((t) => [t.name, t.status])]).to.deep.equal([
        finished.status,
        finished.tests.map((t) => [t.name, t.status]),
      ]);
      expect(kept.tests.length).to.equal(1);
      expect((await acme.pipeline.call("POST", "/v1/runs", { testPlan: planName })).status).to.equal(404);
    });
  }

  it("a plan holds at most 500 test cases: the editor says so and offers no more, and the picker says when it lists only 500", async () => {
    // A project of its own, so the other tests' lists stay short.
    const big = await newProject(system, "Acme big plans", { credits: 0 });
    await addCases(
      system,
      big.projectId,
      Array.from({ length: 501 }, (_, i) =>
        getCase(`Case ${String(i + 1).padStart(3, "0")}`, "bulk", "/"),
      ).join(""),
    );
    const page = await signedIn("wide", big.ownerId);
    await page.goto(`${system.consoleUrl}/projects/${big.projectId}/test-plans/new`);
    const picker = page.getByRole("region", { name: "Add test cases" });
    await picker
      .getByText("More than 500 test cases match: only the first 500 are listed.", { exact: false })
      .waitFor();
    await picker.getByRole("button", { name: "Add all 500 listed" }).click();
    await page.getByText("The plan holds 500 test cases, the most a plan can").waitFor();
    expect(await chosenList(page).getByRole("listitem").count()).to.equal(500);
    // The 501st, found by search, cannot be ticked.
    await picker.getByLabel("Search test cases by name").fill("Case 501");
    const last = pick(picker, "Case 501");
    await last.waitFor();
    expect(await last.isDisabled()).to.equal(true);
    await shot(page, "plan-bound-reached", "wide");
    // Removing one makes room again.
    await chosenList(page).getByRole("button", { name: "Remove Case 001" }).click();
    expect(await last.isDisabled()).to.equal(false);
    await last.check();
    await page.getByLabel("Name", { exact: true }).fill("Everything");
    await page.getByRole("button", { name: "Create test plan" }).click();
    await page.getByRole("heading", { name: "Everything", level: 1 }).waitFor();
    await page.getByText("500 test cases, run in this order").waitFor();
  });

  it("a Viewer sees plans without edit controls, and the console's API refuses the Viewer's changes", async () => {
    const editor = await editorClient("plan-owner@acme.example");
    const projectId = acme.projectId;
    const { testPlan } = await editor.createTestPlan({
      projectId,
      name: "Viewer check",
      description: "Left as it is.",
      testCaseIds: [caseIds.get("Login") ?? ""],
    });
    const testPlanId = testPlan?.id ?? "";
    const viewer = await member("plan-viewer@acme.example", Role.VIEWER);

    for (const width of ["wide", "narrow"] as const) {
      const page = await signedIn(width, viewer.id);
      await page.goto(plansUrl());
      await page.getByRole("link", { name: "Viewer check" }).waitFor();
      await page.getByText("Viewers see the test plans; Editors and above change them.").waitFor();
      await shot(page, "plans-viewer", width);
      await page.goto(`${plansUrl()}/${testPlanId}`);
      await page.getByRole("heading", { name: "Viewer check", level: 1 }).waitFor();
      await page.locator("table").waitFor();
      await shot(page, "plan-viewer", width);
      for (const path of ["", `/${testPlanId}`]) {
        await page.goto(`${plansUrl()}${path}`);
        await page.locator("table").waitFor();
        const controls = [
          ...(await page.getByRole("button").allInnerTexts()),
          ...(await page.getByRole("link").allInnerTexts()),
        ].filter((text) => /^(New test plan|Edit|Delete)/.test(text.trim()));
        expect(controls, `${path || "the list"} at ${px(width)} px`).to.deep.equal([]);
      }
      // The editor's address, typed in: no form, and why.
      await page.goto(`${plansUrl()}/${testPlanId}/edit`);
      await page.getByRole("heading", { name: "Viewers cannot change test plans", level: 1 }).waitFor();
      expect(await page.getByRole("textbox").count()).to.equal(0);
      await shot(page, "plan-edit-viewer", width);
    }

    // The Viewer's own session, calling the console's API directly: the catalog refuses each change.
    const viewerClient = consoleClient(system, await signIn(system, viewer.id));
    const calls: [string, () => Promise<unknown>][] = [
      ["CreateTestPlan", () => viewerClient.createTestPlan({ projectId, name: "Sneaky" })],
      [
        "UpdateTestPlan",
        () => viewerClient.updateTestPlan({ projectId, testPlanId, name: "Renamed by a viewer" }),
      ],
      [
        "UpdateTestPlan (cases)",
        () => viewerClient.updateTestPlan({ projectId, testPlanId, testCaseIds: { ids: [] } }),
      ],
      ["DeleteTestPlan", () => viewerClient.deleteTestPlan({ projectId, testPlanId })],
    ];
    for (const [name, call] of calls)
      expect((await refusal(call())).code, name).to.equal(Code.PermissionDenied);
    const after = await viewerClient.getTestPlan({ projectId, testPlanId });
    expect([after.testPlan?.name, after.testPlan?.description, after.testPlan?.testCaseIds]).to.deep.equal([
      "Viewer check",
      "Left as it is.",
      [caseIds.get("Login")],
    ]);
    expect((await viewerClient.listTestPlans({ projectId })).testPlans.map((p) => p.name)).not.to.include(
      "Sneaky",
    );
  });
});
