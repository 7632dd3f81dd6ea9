// The console's runs and project content in a real browser (Debian chromium through playwright-core)
// against the whole system with its real executors: a run started through the REST API followed
// live at its url, a failing test's steps, not found for a stranger, starting and cancelling from
// the console (credits refunded), what a Viewer cannot do, and the content pages; at 1280 and
// 390 px wide. A local target holds chosen responses until the test releases them, so a run stays
// RUNNING exactly as long as needed (no sleeps). Every page visited is saved under .tmp/screenshots.
import { addMember, createCliContext, createEnvironment } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { demoCredentials, seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { horizontalOverflow, launchBrowser, openSignInLink, screenshot, viewports } from "./browser.js";
import { consoleClient, signIn } from "./console-client.js";
import { HeldTarget, heldCase } from "./held-target.js";
import { addCases, newProject, Pipeline, startTestSystem } from "./pipeline.js";

/** Cases against the held target: one that waits, three that wait (to cancel), one failing at step 2. */
const heldCases = [
  heldCase("Held one", "held", "/hold/one"),
  heldCase("Held a", "three", "/hold/a"),
  heldCase("Held b", "three", "/hold/b"),
  heldCase("Held c", "three", "/hold/c"),
  `- name: Second step fails
  tags: [broken]
  steps:
    - name: fine
      http: { method: GET, path: /fine, headers: { x-token: "{{DEMO_USER}}" } }
    - name: wants created
      http: { method: POST, path: /fine, json: { a: 1 } }
      expect: { status: [201], bodyContains: ["created"] }
    - name: never reached
      http: { method: GET, path: /never }
`,
].join("");

describe("console runs in a browser", function () {
  this.timeout(90_000);
  let system: System;
  let browser: Browser;
  let target: HeldTarget;
  let projectId: string;
  let ownerId: string;
  let organizationId: string;
  let pipeline: Pipeline;
  const contexts: BrowserContext[] = [];
  const releases: (() => void)[] = [];

  /** A fresh browser profile at one of the two widths, signed in as a member. */
  const pageFor = async (memberId: string, width: keyof typeof viewports = "wide"): Promise<Page> => {
    const context = await browser.newContext({ viewport: viewports[width] });
    contexts.push(context);
    const page = await context.newPage();
    await openSignInLink(page, system, memberId);
    return page;
  };
  const member = (email: string, role: Role) =>
    addMember(createCliContext(system.env), {
      organizationId,
      email,
      displayName: email.split("@")[0] ?? "",
      role,
    });
  const at = (path: string) => `${system.consoleUrl}/projects/${projectId}${path}`;
  /** Holds a path of the target until the returned function (or the suite's end) releases it. */
  const hold = (path: string) => {
    const release = target.hold(path);
    releases.push(release);
    return release;
  };
  const runHeading = (page: Page, status: string) =>
    page.getByRole("heading", { level: 1, name: new RegExp(`${status}$`) });
  const noOverflow = async (page: Page) => expect(await horizontalOverflow(page)).to.be.at.most(0);

  before(async () => {
    system = await startTestSystem({
      serviceEnv: {
        // One test at a time: the tests of a held run beyond the first stay QUEUED.
        executor: { CONCURRENCY: "1" },
        // Short stream windows: the page must call again by itself while a run goes on.
        console: { WATCH_WINDOW_SECONDS: "4" },
      },
    });
    target = await HeldTarget.start();
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    projectId = demo.projectId;
    ownerId = demo.ownerMemberId;
    pipeline = new Pipeline(system.gatewayUrl, demo.secret);
    await createEnvironment(createCliContext(system.env), { projectId, name: "held", baseUrl: target.url });
    await addCases(system, projectId, heldCases);
    const owner = consoleClient(system, await signIn(system, ownerId));
    organizationId = (await owner.getProject({ projectId })).organization?.id ?? "";
    browser = await launchBrowser();
  });

  afterEach(async () => {
    for (const release of releases.splice(0)) release();
    for (const context of contexts.splice(0)) await context.close();
  });

  after(async () => {
    await browser?.close();
    await target?.stop();
    await system?.stop();
  });

  it("opens a run at the url the REST API gave and follows it RUNNING → PASSED without reloading", async () => {
    const release = hold("/hold/one");
    const started = await pipeline.start({ tags: ["held"], environment: "held" });
    expect(started.url).to.equal(at(`/runs/${started.id}`));

    const page = await pageFor(ownerId);
    await page.goto(started.url);
    await target.arrived("/hold/one");
    await runHeading(page, "Running").waitFor();
    await page
      .getByRole("row", { name: /Held one/ })
      .getByText("Running", { exact: true })
      .waitFor();
    await page.getByText("Started by", { exact: true }).waitFor();
    await page.getByText("Demo Owner, with the API key “make run demo”").waitFor();
    await page.getByText(/Live: this page updates/).waitFor();
    // Nothing but the page's own stream may change it from here: no reload, no navigation.
    let loads = 0;
    page.on("load", () => loads++);
    await page.evaluate("window.sameDocument = true");
    await screenshot(page, "run-running-1280");
    await noOverflow(page);

    release();
    await runHeading(page, "Passed").waitFor();
    await page
      .getByRole("row", { name: /Held one/ })
      .getByText("Passed", { exact: true })
      .waitFor();
    expect(await page.evaluate("window.sameDocument")).to.equal(true);
    expect(loads).to.equal(0);
    expect(await page.getByText(/Live: this page updates/).count()).to.equal(0);
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).to.equal(0);
    // One test, said in the singular, in the legend and in the bar's text alternative.
    const legend = page.getByRole("list", { name: "Tests by status" });
    expect((await legend.getByRole("listitem").first().textContent())?.trim()).to.equal("1 test");
    await page.getByRole("img", { name: "1 test: 1 passed" }).waitFor();
    await screenshot(page, "run-passed-1280");
  });

  it("says so when the live stream is lost, and picks the run up again by itself", async () => {
    const release = hold("/hold/one");
    const started = await pipeline.start({ tags: ["held"], environment: "held" });
    const page = await pageFor(ownerId, "narrow");
    await page.goto(started.url);
    await runHeading(page, "Running").waitFor();
    await page.evaluate("window.sameDocument = true");
    // Every further call of the stream fails, as when the console is away: the open stream ends
    // with its window, the next call breaks.
    const watchCalls = "**/testrun.console.v1.ConsoleService/WatchRun";
    await page.route(watchCalls, (route) => route.abort("connectionrefused"));
    await page.getByText("Connection lost: reconnecting…").waitFor();
    await screenshot(page, "run-reconnecting-390");
    release();
    await page.unroute(watchCalls);
    await runHeading(page, "Passed").waitFor();
    expect(await page.getByText("Connection lost").count()).to.equal(0);
    expect(await page.evaluate("window.sameDocument")).to.equal(true);
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`shows a failing test's steps: the failing one with the summary, the next not run (${viewports[width].width} px)`, async () => {
      const started = await pipeline.start({ tags: ["broken"], environment: "held" });
      const run = await pipeline.finished(started.id);
      expect(run.status).to.equal("FAILED");
      const test = run.tests[0];
      const page = await pageFor(ownerId, width);

      await page.goto(run.url);
      await runHeading(page, "Failed").waitFor();
      await page.getByText(test?.summary ?? "").waitFor();
      await screenshot(page, `run-failed-${viewports[width].width}`);
      await noOverflow(page);
      await page.getByRole("link", { name: "Second step fails" }).click();
      await page.waitForURL(test?.url ?? "");

      const steps = page.getByRole("listitem").filter({ has: page.getByRole("heading", { level: 3 }) });
      await page.getByRole("heading", { level: 1, name: /Second step fails/ }).waitFor();
      expect(await steps.count()).to.equal(3);
      await steps.nth(0).getByText("Passed", { exact: true }).waitFor();
      await steps.nth(1).getByText("Failed", { exact: true }).waitFor();
      await steps
        .nth(1)
        .getByText(test?.summary ?? "")
        .waitFor();
      await steps.nth(2).getByText("Not run", { exact: true }).waitFor();
      expect(await steps.nth(1).getAttribute("aria-current")).to.equal("step");
      // The steps as stored: a variable is a name, never its value.
      await steps.nth(0).getByText("{{DEMO_USER}}").waitFor();
      await steps.nth(1).getByText("Status 201", { exact: true }).waitFor();
      await steps.nth(1).getByText("Body contains “created”", { exact: true }).waitFor();
      await screenshot(page, `test-failed-${viewports[width].width}`);
      await noOverflow(page);

      // The test's url opens the same page directly.
      await page.goto(test?.url ?? "");
      await page.getByRole("heading", { level: 1, name: /Second step fails/ }).waitFor();
      await page.getByRole("link", { name: `Run: ${run.name}` }).click();
      await page.waitForURL(run.url);
    });
  }

  it("answers another organization's run, and an unknown run, with the not-found page", async () => {
    const started = await pipeline.start({ testPlan: "Smoke" });
    const other = await newProject(system, "Someone else", { credits: 0 });
    const stranger = await pageFor(other.ownerId);
    await stranger.goto(started.url);
    await stranger.getByRole("heading", { name: "Run not found" }).waitFor();
    await screenshot(stranger, "run-not-found-1280");
    await stranger.goto(`${started.url}/tests/${started.tests[0]?.id}`);
    await stranger.getByRole("heading", { name: /not found$/ }).waitFor();

    const owner = await pageFor(ownerId, "narrow");
    await owner.goto(at("/runs/run_01m80000000000000000000000"));
    await owner.getByRole("heading", { name: "Run not found" }).waitFor();
    await owner.goto(at("/no-such-section"));
    await owner.getByRole("heading", { name: "Page not found" }).waitFor();
    await pipeline.finished(started.id);
  });

  it("an Editor starts a run from the console: cost first, then its page; the REST API lists it", async () => {
    const editor = await member("editor@demo.example", Role.EDITOR);
    const page = await pageFor(editor.id);
    await page.goto(at("/runs"));
    await page.getByRole("row", { name: /Smoke/ }).first().waitFor();
    await screenshot(page, "runs-1280");
    await noOverflow(page);

    await page.getByRole("button", { name: "Start run" }).click();
    const dialog = page.getByRole("dialog", { name: "Start run" });
    await dialog.getByLabel("Environment").selectOption({ label: "local (default)" });
    await dialog.getByRole("combobox", { name: "Test plan" }).selectOption({ label: "Smoke (2 test cases)" });
    await dialog.getByText(/^2 tests · 2 credits · balance [\d,]+$/).waitFor();
    await dialog.getByLabel("Name").fill("Smoke from the console");
    await screenshot(page, "start-run-plan-1280");

    await dialog.getByRole("button", { name: "Start run" }).click();
    await page.waitForURL(/\/runs\/run_[0-9a-z]+$/);
    const runId = page.url().split("/").at(-1) ?? "";
    await page.getByRole("heading", { level: 1, name: /^Smoke from the console/ }).waitFor();
    await page.getByText(/^editor$/).waitFor();
    const listed = await pipeline.call("GET", "/v1/runs");
    expect((listed.body.runs as { id: string; name: string }[]).find((r) => r.id === runId)?.name).to.equal(
      "Smoke from the console",
    );
    await runHeading(page, "Passed").waitFor();
    await screenshot(page, "run-started-in-console-1280");
  });

  it("an Editor picks test cases from a searchable checklist at 390 px", async () => {
    const editor = await member("narrow.editor@demo.example", Role.EDITOR);
    const page = await pageFor(editor.id, "narrow");
    await page.goto(at("/runs"));
    await page.getByRole("button", { name: "Start run" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Start run" });
    await dialog.getByRole("radio", { name: "Test cases" }).check();
    await dialog.getByText("Choose one test case or more.").waitFor();
    await dialog.getByRole("searchbox").fill("health");
    await dialog.getByLabel("health answers").check();
    await dialog.getByText(/^1 test · 1 credit · balance [\d,]+$/).waitFor();
    await dialog.getByRole("searchbox").fill("");
    await dialog.getByLabel("unknown page is a 404").check();
    await dialog.getByText(/^2 tests · 2 credits · balance [\d,]+$/).waitFor();
    await screenshot(page, "start-run-cases-390");
    await noOverflow(page);
    await dialog.getByRole("button", { name: "Start run" }).click();
    await page.waitForURL(/\/runs\/run_[0-9a-z]+$/);
    await runHeading(page, "Passed").waitFor();
    await screenshot(page, "run-started-in-console-390");
    await noOverflow(page);
  });

  it("says in words when the balance cannot pay for a run", async () => {
    const poor = await newProject(system, "Poor", { credits: 1 });
    await addCases(system, poor.projectId, heldCases);
    const page = await pageFor(poor.ownerId);
    await page.goto(`${system.consoleUrl}/projects/${poor.projectId}/runs`);
    await page.getByText("No runs yet").waitFor();
    await screenshot(page, "runs-empty-1280");
    await page.getByRole("button", { name: "Start run" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Start run" });
    await dialog.getByRole("radio", { name: "Tags" }).check();
    await dialog.getByLabel("three").check();
    await dialog.getByText("Not enough credits: this run needs 3 credits; the project has 1.").waitFor();
    // And who can add credits: no member can (the system names no OPERATOR_CONTACT).
    await dialog
      .getByText(
        "Credits are granted by an operator of this Testrun installation, not by the organization's owners or admins.",
      )
      .waitFor();
    await dialog.getByRole("button", { name: "Start run" }).click();
    await dialog.getByRole("alert").getByText("This run needs 3 credits; the project has 1.").waitFor();
    await screenshot(page, "start-run-short-1280");
  });

  it("an Editor cancels a run: queued tests are skipped and their credits come back in the ledger", async () => {
    for (const path of ["/hold/a", "/hold/b", "/hold/c"]) hold(path);
    const started = await pipeline.start({ tags: ["three"], environment: "held" });
    const editor = await member("canceller@demo.example", Role.EDITOR);
    const page = await pageFor(editor.id);
    await page.goto(started.url);
    await page.getByRole("cell", { name: "Running" }).waitFor();
    await page.getByRole("button", { name: "Cancel run" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText(/Tests not yet started \(2\) are skipped, and their 2 credits refunded/).waitFor();
    await dialog.getByText(/Tests already running \(1\) are stopped and their results discarded/).waitFor();
    await screenshot(page, "cancel-run-1280");
    await dialog.getByRole("button", { name: "Cancel run" }).click();
    await runHeading(page, "Skipped").waitFor();
    await page.getByText("Skipped: the run was cancelled before any test passed or failed.").waitFor();
    await screenshot(page, "run-cancelled-1280");

    await page.getByRole("link", { name: "Credits" }).click();
    const refund = page.getByRole("row", { name: new RegExp(`Refund.*cancelled.*${started.id}`) });
    await refund.waitFor();
    expect(await refund.getByRole("cell", { name: "+2" }).count()).to.equal(1);
    await screenshot(page, "credits-1280");
    await noOverflow(page);
  });

  it("a Viewer sees runs but no Start or Cancel, and variables without Set new value", async () => {
    const release = hold("/hold/one");
    const started = await pipeline.start({ tags: ["held"], environment: "held" });
    const viewer = await member("viewer@demo.example", Role.VIEWER);
    const page = await pageFor(viewer.id, "narrow");
    await page.goto(at("/runs"));
    await page.locator(`a[href$="/runs/${started.id}"]`).waitFor();
    expect(await page.getByRole("button", { name: "Start run" }).count()).to.equal(0);
    await screenshot(page, "runs-viewer-390");
    await noOverflow(page);
    // Filters live in the URL: a link keeps them, the back button undoes them.
    await page.getByRole("combobox", { name: "Status" }).selectOption("Failed");
    await page.waitForURL(/\?status=failed$/);
    await page.getByRole("row").filter({ hasText: "Running" }).waitFor({ state: "detached" });
    const statuses = await page.locator("tbody td[data-label=Status]").allInnerTexts();
    expect(statuses.length).to.be.greaterThan(0);
    expect(new Set(statuses.map((s) => s.replace("Status", "").trim()))).to.deep.equal(new Set(["Failed"]));
    await screenshot(page, "runs-failed-390");
    await page.goBack();
    await page.getByRole("row").filter({ hasText: "Running" }).waitFor();
    expect(await page.getByRole("combobox", { name: "Status" }).inputValue()).to.equal("");
    await page.goto(started.url);
    await runHeading(page, "Running").waitFor();
    expect(await page.getByRole("button", { name: "Cancel run" }).count()).to.equal(0);
    await screenshot(page, "run-viewer-390");
    release();
    await runHeading(page, "Passed").waitFor();
    await page.goto(at("/variables"));
    await page.getByText("DEMO_PASSWORD", { exact: true }).waitFor();
    expect(await page.getByRole("button", { name: /Set new value/ }).count()).to.equal(0);
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`shows the content pages: overview, environments, a plan, a case, variables, credits (${viewports[width].width} px)`, async () => {
      await pipeline.finished((await pipeline.start({ testPlan: "Smoke" })).id);
      const page = await pageFor(ownerId, width);
      const px = viewports[width].width;
      const visit = async (path: string, name: string, ready: () => Promise<void>) => {
        await page.goto(at(path));
        await ready();
        await screenshot(page, `${name}-${px}`);
        await noOverflow(page);
      };

      await visit("", "overview", async () => {
        await page.getByRole("heading", { name: "Recent runs" }).waitFor();
        await page.getByRole("heading", { name: "Credit balance" }).waitFor();
        await page.getByRole("row", { name: /Smoke/ }).first().waitFor();
      });
      await visit("/environments", "environments", async () => {
        await page.getByRole("row", { name: /local.*Default/ }).waitFor();
        await page
          .getByRole("row", { name: /unreachable/ })
          .getByText("http://127.0.0.1:9")
          .waitFor();
      });
      await visit("/test-plans", "test-plans", () => page.getByRole("link", { name: "Smoke" }).waitFor());
      await page.getByRole("link", { name: "Smoke" }).click();
      await page.getByRole("heading", { level: 1, name: "Smoke" }).waitFor();
      const cases = page.getByRole("row").filter({ has: page.getByRole("link") });
      expect(await cases.allInnerTexts()).to.satisfy(
        (rows: string[]) =>
          rows[0]?.includes("health answers") && rows[1]?.includes("log in with the demo user"),
      );
      await screenshot(page, `test-plan-${px}`);
      await noOverflow(page);
      await page.getByRole("link", { name: "log in with the demo user" }).click();
      await page.getByRole("heading", { level: 1, name: /log in with the demo user/ }).waitFor();
      await page.getByText("POST", { exact: true }).waitFor();
      await page.getByText('"{{DEMO_PASSWORD}}"', { exact: false }).waitFor();
      await page.getByText("JSON $.ok equals true", { exact: false }).waitFor();
      await screenshot(page, `test-case-${px}`);
      await noOverflow(page);
      await visit("/test-cases?tag=regression", "test-cases", async () => {
        // Exact names: an Editor's rows also hold "Edit <name>" links.
        await page.getByRole("link", { name: "a wrong password is forbidden", exact: true }).waitFor();
        expect(await page.getByRole("link", { name: "health answers", exact: true }).count()).to.equal(0);
      });

      await visit("/variables", "variables", () => page.getByText("DEMO_USER", { exact: true }).waitFor());
      expect(await page.content()).not.to.contain(demoCredentials.password);
      // Write-only: a password field, empty each time the dialog opens.
      await page.getByRole("button", { name: "Set new value of DEMO_PASSWORD" }).click();
      const dialog = page.getByRole("dialog");
      const field = dialog.getByLabel("New value");
      expect(await field.getAttribute("type")).to.equal("password");
      await field.fill("not saved");
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await page.getByRole("button", { name: "Set new value of DEMO_PASSWORD" }).click();
      expect(await field.inputValue()).to.equal("");
      await field.fill(demoCredentials.password);
      await screenshot(page, `variable-set-${px}`);
      await dialog.getByRole("button", { name: "Save value" }).click();
      await page.getByText("New value of DEMO_PASSWORD saved.").waitFor();
      expect(await page.content()).not.to.contain(demoCredentials.password);

      await visit("/credits", "credits-ledger", async () => {
        await page.getByRole("row", { name: /Grant.*demo credits/ }).waitFor();
        await page
          .getByRole("row", { name: /Charge/ })
          .first()
          .waitFor();
      });
    });
  }
});
