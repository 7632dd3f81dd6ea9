// Browser steps in the console, in a real browser against the whole system: an Editor builds a test
// case mixing an HTTP step and browser steps of every kind of action in the form (from the
// keyboard where it counts), with "Record a trace every time", saves it and reads it back; the
// catalog's field errors for browser steps land at their fields; the JSON view edits a browser
// step. The Playwright trace viewer is served by the console under a policy of its own (every
// other page keeps the strict one): its shell loads with no violation and cannot fetch a trace from
// another origin; a trace recorded by playwright-core, stored through RunsService.PutArtifact
// under an executor's claim, opens in it with the member's session, and /artifacts/{id} serves
// the bytes to that member only. Screenshots at 1280 and 390 px under .tmp/screenshots.
import { createServer, get, type Server } from "node:http";
import { create, toJson } from "@bufbuild/protobuf";
import { createCliContext, setVariable } from "@testrun/cli";
import {
  artifactPolicy,
  contentSecurityPolicy,
  traceViewerPolicy,
  traceViewerRoot,
} from "@testrun/console/policies";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { ArtifactKind, RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { serviceClient } from "@testrun/kit";
import { expect } from "chai";
import type { BrowserContext, Locator, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { errorAt, expectNoErrorAt, horizontalOverflow, screenshot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { consoleClient, signIn } from "./console-client.js";
import { addCases, newProject, type TestProject } from "./pipeline.js";

type Width = keyof typeof viewports;

/** The console's policy as docs/console.md ("Browser defences") gives it, word for word. */
const documentedPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

describe("console: authoring browser steps, artifacts and the trace viewer in a browser", function () {
  this.timeout(120_000);
  const suite = consoleBrowserSuite("Acme browser authoring", {
    credits: 10,
    // Its last tests stop the executor, to claim a test as one would.
    ownSystem: true,
  });
  const { signedIn, member } = suite;
  let system: System;
  let acme: TestProject;
  before(async () => {
    ({ system, project: acme } = suite);
    await setVariable(createCliContext(system.env), {
      projectId: acme.projectId,
      name: "DEMO_USER",
      value: "demo",
    });
  });
  const px = (width: Width) => viewports[width].width;
  const url = (path: string) => `${system.consoleUrl}/projects/${acme.projectId}${path}`;
  /** Saves the whole page (the window as tall as the page) and checks nothing overflows sideways. */
  const shot = async (page: Page, name: string, width: Width) => {
    expect(await horizontalOverflow(page), `${name} overflows at ${px(width)} px`).to.be.at.most(0);
    const height = await page.evaluate<number>("document.documentElement.scrollHeight");
    await page.setViewportSize({ width: px(width), height });
    await screenshot(page, `${name}-${px(width)}`);
    await page.setViewportSize(viewports[width]);
  };
  const stepAt = (page: Page, index: number) => page.locator(".steps-editor > li").nth(index);
  const isFocused = (control: Locator) => control.evaluate((el) => el === el.ownerDocument.activeElement);
  /** The warning a control's aria-describedby names, if any. */
  const warningAt = async (control: Locator) => {
    for (const id of ((await control.getAttribute("aria-describedby")) ?? "").split(" ").filter(Boolean)) {
      const note = control.page().locator(`[id="${id}"]`);
      if ((await note.getAttribute("class")) === "field-warning") return (await note.textContent()) ?? "";
    }
    return undefined;
  };
  /** Adds a browser step and gives it a name and an action; the new step (by its place). */
  const addBrowserStep = async (page: Page, name: string, action: string) => {
    const index = await page.locator(".steps-editor > li").count();
    await page.getByRole("button", { name: "Add browser step" }).click();
    const step = stepAt(page, index);
    await step.getByLabel("Step name").fill(name);
    await step.getByLabel("Action").selectOption({ label: action });
    return step;
  };
  const stored = async (testCaseId: string) => {
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const { testCase } = await owner.getTestCase({ projectId: acme.projectId, testCaseId });
    return testCase;
  };

  for (const width of ["wide", "narrow"] as const) {
    it(`an Editor builds a case of an HTTP step and browser steps of every action, records traces, saves it and reads it back (${px(width)} px)`, async () => {
      const editor = await member(`browser-builder-${width}@acme.example`, Role.EDITOR);
      const page = await signedIn(width, editor.id);
      await page.goto(url("/test-cases/new"));
      await page.getByRole("heading", { name: "New test case", level: 1 }).waitFor();
      await page.getByText("Project variables:").waitFor();
      const caseName = `Sign in through the browser ${width}`;
      await page.getByLabel("Name", { exact: true }).fill(caseName);
      await page.getByLabel("Record a trace every time").check();

      // Step 1 stays an HTTP request; step 2 is made a browser step from the keyboard.
      const health = stepAt(page, 0);
      await health.getByLabel("Step name").fill("health");
      await health.getByLabel("Path").fill("/health");
      const addHttp = page.getByRole("button", { name: "Add HTTP step" });
      await addHttp.focus();
      await page.keyboard.press("Enter");
      const open = stepAt(page, 1);
      const openName = open.getByLabel("Step name");
      expect(await isFocused(openName), "a new step's name has focus").to.equal(true);
      await page.keyboard.type("open sign-in");
      await page.keyboard.press("Tab");
      expect(await isFocused(open.getByRole("radio", { name: "HTTP request" }))).to.equal(true);
      await page.keyboard.press("ArrowRight");
      expect(await open.getByRole("radio", { name: "Browser" }).isChecked()).to.equal(true);
      await page.keyboard.press("Tab");
      expect(await isFocused(open.getByLabel("Action")), "the action comes next").to.equal(true);
      await open.getByLabel("URL").fill("/login");

      const email = await addBrowserStep(page, "email", "Fill in");
      await email.getByLabel("Find it by").selectOption({ label: "Label" });
      await email.getByLabel("Label text").fill("Email");
      const value = email.getByLabel("Value");
      // A name no variable has is flagged as typed, as in HTTP steps.
      await value.fill("{{DEMO_USR}}");
      expect(await warningAt(value)).to.equal(
        "{{DEMO_USR}} is not a project variable or a value saved by an earlier step: the step fails unless a variable named DEMO_USR is added before the test runs.",
      );
      await value.fill("{{DEMO_USER}}");
      expect(await warningAt(value)).to.equal(undefined);

      const plan = await addBrowserStep(page, "plan", "Select options");
      await plan.getByLabel("Find it by").selectOption({ label: "Label" });
      await plan.getByLabel("Label text").fill("Plan");
      await plan.getByLabel("Option 1", { exact: true }).fill("Pro");
      await plan.getByRole("button", { name: "Add option" }).click();
      await plan.getByLabel("Option 2", { exact: true }).fill("Yearly");

      const remember = await addBrowserStep(page, "remember me", "Check");
      await remember.getByLabel("Role").fill("checkbox");
      await remember.getByLabel("Accessible name").fill("Remember me");

      const submit = await addBrowserStep(page, "submit", "Click");
      await submit.getByLabel("Role").fill("button");
      await submit.getByLabel("Accessible name").fill("Sign in");
      await submit.getByLabel("Timeout (ms)").fill("5000");

      const signedInStep = await addBrowserStep(page, "signed in", "Wait for");
      await signedInStep.getByRole("radio", { name: "The URL matches" }).check();
      await signedInStep.getByLabel("URL pattern").fill("/account/**");

      const greeting = await addBrowserStep(page, "greeting", "Expect");
      await greeting
        .getByLabel("Check", { exact: true })
        .selectOption({ label: "The element's text contains" });
      await greeting.getByLabel("Find it by").selectOption({ label: "Test id" });
      await greeting.getByLabel("Test id").fill("greeting");
      await greeting.getByLabel("Text it contains").fill("Hello");

      const menu = await addBrowserStep(page, "menu", "Hover");
      await menu.getByLabel("Find it by").selectOption({ label: "Text shown" });
      await menu.getByLabel("Text shown").fill("Menu");
      await menu.getByLabel("Exact text").check();
      await menu.getByLabel("Which match").fill("2");

      const toast = await addBrowserStep(page, "toast gone", "Wait for");
      await toast.getByLabel("Find it by").selectOption({ label: "CSS selector" });
      await toast.getByLabel("CSS selector").fill(".toast");
      await toast.getByLabel("State", { exact: true }).selectOption({ label: "Gone from the page" });

      const close = await addBrowserStep(page, "close", "Press a key");
      await close.getByLabel("Key").fill("Escape");

      const home = await addBrowserStep(page, "home", "Take a screenshot");
      await home.getByLabel("Screenshot name").fill("home");
      await home.getByLabel("The whole page").check();
      await page.getByRole("heading", { name: /Steps\s+12 of 100/ }).waitFor();
      await shot(page, "browser-steps-editor", width);

      await page.getByRole("button", { name: "Create test case" }).click();
      await page.getByRole("heading", { name: caseName, level: 1 }).waitFor();
      await page.getByText(`${caseName} created.`).waitFor();
      const testCaseId = new URL(page.url()).pathname.split("/").pop() ?? "";
      // Read back: each step as the test case page says it, and the trace setting.
      const bodies = await page.locator("li.step .step-body").allInnerTexts();
      const words = bodies.map((text) => text.replace(/\s+/g, " ").replace("In the browser: ", "").trim());
      expect(words[0]).to.match(/^GET \/health/);
      expect(words.slice(1)).to.deep.equal([
        "goto /login",
        "fill getByLabel('Email') Types “{{DEMO_USER}}”",
        "select getByLabel('Plan') Chooses “Pro”, “Yearly”",
        "check getByRole('checkbox', { name: 'Remember me' })",
        "click getByRole('button', { name: 'Sign in' }) · times out after 5.0 s",
        "wait for URL /account/**",
        "expect getByTestId('greeting') Text contains “Hello”",
        "hover getByText('Menu', { exact: true }).nth(1)",
        "wait for locator('.toast') Until it is gone from the page",
        "press Escape On the element that has the focus",
        "screenshot home Of the whole page",
      ]);
      await page.getByText("Recorded at every run").waitFor();
      await shot(page, "browser-steps-case", width);

      // What the catalog stored is what the form said.
      const testCase = await stored(testCaseId);
      expect(testCase?.recordTrace).to.equal(true);
      expect(testCase?.steps.map((step) => toJson(StepSchema, step))).to.deep.equal([
        { name: "health", http: { request: { method: "GET", path: "/health" } } },
        { name: "open sign-in", browser: { goto: { url: "/login" } } },
        { name: "email", browser: { fill: { locator: { label: "Email" }, value: "{{DEMO_USER}}" } } },
        { name: "plan", browser: { select: { locator: { label: "Plan" }, options: ["Pro", "Yearly"] } } },
        { name: "remember me", browser: { check: { locator: { role: "checkbox", name: "Remember me" } } } },
        {
          name: "submit",
          browser: { click: { locator: { role: "button", name: "Sign in" } }, timeoutMs: 5000 },
        },
        { name: "signed in", browser: { waitFor: { url: "/account/**" } } },
        { name: "greeting", browser: { expect: { locator: { testId: "greeting" }, text: "Hello" } } },
        { name: "menu", browser: { hover: { locator: { text: "Menu", exact: true, nth: 2 } } } },
        {
          name: "toast gone",
          browser: { waitFor: { locator: { css: ".toast" }, state: "ELEMENT_STATE_DETACHED" } },
        },
        { name: "close", browser: { press: { key: "Escape" } } },
        { name: "home", browser: { screenshot: { name: "home", fullPage: true } } },
      ]);

      // Opened again, the form shows every field as it was typed.
      await page.getByRole("link", { name: "Edit", exact: true }).click();
      await page.getByRole("heading", { name: `Edit ${caseName}`, level: 1 }).waitFor();
      expect(await page.getByLabel("Record a trace every time").isChecked()).to.equal(true);
      const again = (index: number) => stepAt(page, index);
      expect(await again(2).getByLabel("Value").inputValue()).to.equal("{{DEMO_USER}}");
      expect(await again(5).getByLabel("Accessible name").inputValue()).to.equal("Sign in");
      expect(await again(8).getByLabel("Which match").inputValue()).to.equal("2");
      expect(await again(9).getByLabel("State", { exact: true }).inputValue()).to.equal(String(4));
      expect(await page.getByText("No changes").count()).to.equal(1);
    });
  }

  for (const width of ["wide", "narrow"] as const) {
    it(`shows what cannot be read and the catalog's errors for browser steps at their fields, then saves (${px(width)} px)`, async () => {
      const editor = await member(`browser-errors-${width}@acme.example`, Role.EDITOR);
      const page = await signedIn(width, editor.id);
      await page.goto(url("/test-cases/new"));
      await page.getByRole("heading", { name: "New test case", level: 1 }).waitFor();
      const caseName = `Browser errors ${width}`;
      await page.getByLabel("Name", { exact: true }).fill(caseName);
      const open = stepAt(page, 0);
      await open.getByLabel("Step name").fill("open");
      await open.getByRole("radio", { name: "Browser" }).check();
      const gotoUrl = open.getByLabel("URL");
      await gotoUrl.fill("login");
      const click = await addBrowserStep(page, "sign in", "Click");
      const role = click.getByLabel("Role");
      await role.fill("Button");
      await click.getByLabel("Accessible name").fill("Sign in");
      const nth = click.getByLabel("Which match");
      await nth.fill("second");
      const picture = await addBrowserStep(page, "picture", "Take a screenshot");
      const pictureName = picture.getByLabel("Screenshot name");
      await pictureName.fill("home/page");
      const timeout = picture.getByLabel("Timeout (ms)");
      await timeout.fill("200000");

      // The form's own check first: nothing is sent while a field cannot be read.
      await page.getByRole("button", { name: "Create test case" }).click();
      expect(await errorAt(nth)).to.equal(
        "Must be a whole number: 1 for the first match, 2 for the second….",
      );
      expect(await isFocused(nth)).to.equal(true);
      await nth.fill("2");
      await expectNoErrorAt(nth);

      // Then the catalog's, each at its field; focus on the first.
      await page.getByRole("button", { name: "Create test case" }).click();
      await page.locator(".field-error").first().waitFor();
      expect(await errorAt(gotoUrl)).to.match(/^Must be a path starting with "\/"/);
      expect(await errorAt(role)).to.equal('"Button" is not an ARIA role: roles are lower case ("button")');
      expect(await errorAt(pictureName)).to.match(/^Must be 1 to 100 characters of letters, digits/);
      expect(await errorAt(timeout)).to.equal("Must be 0 (the default, 10000) or 1 to 120000.");
      expect(await isFocused(gotoUrl)).to.equal(true);
      await shot(page, "browser-steps-errors", width);

      // Each goes once its field changes; a role refused stays refused while it is still a role.
      await gotoUrl.fill("/login");
      await expectNoErrorAt(gotoUrl);
      await click.getByLabel("Find it by").selectOption({ label: "Label" });
      await expectNoErrorAt(click.getByLabel("Label text"));
      await click.getByLabel("Find it by").selectOption({ label: "Role and name" });
      expect(await errorAt(role)).to.match(/is not an ARIA role/);
      await role.fill("button");
      await pictureName.fill("home page");
      await timeout.fill("20000");
      expect(await page.locator(".field-error").count()).to.equal(0);
      await page.getByRole("button", { name: "Create test case" }).click();
      await page.getByText(`${caseName} created.`).waitFor();
    });
  }

  it("the JSON view shows browser steps and Record a trace in the file format, and edits them", async () => {
    const editor = await member("browser-json@acme.example", Role.EDITOR);
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const caseName = "Browser JSON";
    const { testCase } = await owner.createTestCase({
      projectId: acme.projectId,
      name: caseName,
      recordTrace: true,
      steps: [
        create(StepSchema, {
          name: "open",
          kind: { case: "browser", value: { action: { case: "goto", value: { url: "/login" } } } },
        }),
        create(StepSchema, {
          name: "submit",
          kind: {
            case: "browser",
            value: {
              action: {
                case: "click",
                value: { locator: { by: { case: "role", value: "button" }, name: "Sign in" } },
              },
              timeoutMs: 5000,
            },
          },
        }),
      ],
    });
    const page = await signedIn("wide", editor.id);
    await page.goto(url(`/test-cases/${testCase?.id}/edit`));
    await page.getByRole("heading", { name: `Edit ${caseName}`, level: 1 }).waitFor();
    await page.getByRole("button", { name: "JSON", exact: true }).click();
    const text = page.getByLabel("The test case as JSON");
    const written = JSON.parse(await text.inputValue());
    expect(written).to.deep.equal({
      name: caseName,
      recordTrace: true,
      steps: [
        { name: "open", browser: { goto: { url: "/login" } } },
        {
          name: "submit",
          browser: { click: { locator: { role: "button", name: "Sign in" } }, timeoutMs: 5000 },
        },
      ],
    });
    await shot(page, "browser-steps-json", "wide");
    written.steps[1].browser.click.locator.name = "Log in";
    written.steps.push({
      name: "greeting",
      browser: { expect: { locator: { testId: "greeting" }, text: "Hi" } },
    });
    await text.fill(JSON.stringify(written, null, 2));
    await page.getByRole("button", { name: "Form", exact: true }).click();
    expect(await stepAt(page, 1).getByLabel("Accessible name").inputValue()).to.equal("Log in");
    expect(await stepAt(page, 2).getByLabel("Text it contains").inputValue()).to.equal("Hi");
    await page.getByRole("button", { name: "Save test case" }).click();
    await page.getByText(`${caseName} saved.`).waitFor();
    const saved = await stored(testCase?.id ?? "");
    expect(saved?.steps.map((step) => toJson(StepSchema, step))).to.deep.equal([
      { name: "open", browser: { goto: { url: "/login" } } },
      {
        name: "submit",
        browser: { click: { locator: { role: "button", name: "Log in" } }, timeoutMs: 5000 },
      },
      { name: "greeting", browser: { expect: { locator: { testId: "greeting" }, text: "Hi" } } },
    ]);
    expect(saved?.recordTrace).to.equal(true);
  });

  describe("the trace viewer", () => {
    it("keeps the console's strict policy on every other page; the viewer's files have their own", async () => {
      const viewerPolicy = traceViewerPolicy(traceViewerRoot());
      expect(contentSecurityPolicy).to.equal(documentedPolicy);
      const cookie = await signIn(system, acme.ownerId);
      for (const path of [
        "/",
        "/sign-in",
        `/projects/${acme.projectId}/test-cases`,
        "/trace-viewer-not",
        "/assets/none.js",
      ]) {
        const answer = await fetch(`${system.consoleUrl}${path}`, { headers: { cookie } });
        expect(answer.headers.get("content-security-policy"), path).to.equal(documentedPolicy);
      }
      for (const path of [
        "/trace-viewer/",
        "/trace-viewer/index.html",
        "/trace-viewer/sw.bundle.js",
        "/trace-viewer/snapshot.html",
      ]) {
        const answer = await fetch(`${system.consoleUrl}${path}`);
        expect(answer.status, path).to.equal(200);
        expect(answer.headers.get("content-security-policy"), path).to.equal(viewerPolicy);
        expect(answer.headers.get("x-content-type-options"), path).to.equal("nosniff");
        expect(answer.headers.get("x-frame-options"), path).to.equal("DENY");
      }
      expect(viewerPolicy).to.match(
        /^default-src 'none'; script-src 'self' 'sha256-[^']+'; style-src 'self'/,
      );
      expect(viewerPolicy).not.to.match(/unsafe-inline|unsafe-eval|\*/);
      const worker = await fetch(`${system.consoleUrl}/trace-viewer/sw.bundle.js`);
      expect(worker.headers.get("content-type")).to.match(/^(text|application)\/javascript/);
      // Under /trace-viewer/ only the viewer's files: never the console's app or a file outside.
      for (const path of ["/trace-viewer/nothing.html", "/trace-viewer/..%2F..%2Fpackage.json"]) {
        const missing = await fetch(`${system.consoleUrl}${path}`);
        expect(missing.status, path).to.equal(404);
        expect(await missing.text()).not.to.contain('<div id="root">');
        expect(missing.headers.get("content-security-policy")).to.equal(documentedPolicy);
      }
      // Revalidated, not downloaded again (as a browser's cache asks: fetch() would add no-cache).
      const index = await fetch(`${system.consoleUrl}/trace-viewer/index.html`);
      expect(index.headers.get("cache-control")).to.equal("no-cache");
      const again = await statusOf(`${system.consoleUrl}/trace-viewer/index.html`, {
        "if-modified-since": index.headers.get("last-modified") ?? "",
      });
      expect(again).to.equal(304);
    });

    it("loads its shell with its service worker and no policy violation, and fetches no trace from another origin", async () => {
      const elsewhere: string[] = [];
      const other: Server = createServer((req, res) => {
        elsewhere.push(req.url ?? "");
        res.setHeader("access-control-allow-origin", "*");
        res.end("not a trace");
      });
      await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
      try {
        const page = await signedIn("wide", acme.ownerId);
        const violations = policyViolations(page.context());
        await page.goto(`${system.consoleUrl}/trace-viewer/index.html`);
        await page.getByRole("heading", { name: "Drop Playwright Trace to load" }).waitFor();
        expect(await page.evaluate<boolean>("navigator.serviceWorker.controller !== null")).to.equal(true);
        await screenshot(page, "trace-viewer-shell-1280");
        const port = (other.address() as { port: number }).port;
        await page.goto(
          `${system.consoleUrl}/trace-viewer/index.html?trace=${encodeURIComponent(`http://127.0.0.1:${port}/trace.zip`)}`,
        );
        await page.getByText(/Could not load trace/).waitFor();
        expect(elsewhere, "the other origin was asked nothing").to.deep.equal([]);
        // The refusal is the policy's (connect-src, which holds for the service worker), and it
        // is the only thing the policy refused.
        const trace = `http://127.0.0.1:${port}/trace.zip`;
        expect(
          violations.some((text) => text.includes("connect-src 'self'") && text.includes(trace)),
        ).to.equal(true);
        expect(violations.filter((text) => !text.includes(trace))).to.deep.equal([]);
      } finally {
        other.close();
      }
    });
  });

  // Last: the executor is stopped, so that this test claims a test as an executor would.
  describe("artifacts", () => {
    let traceZip: Buffer;
    let traceId: string;
    let screenshotId: string;
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      "base64",
    );

    before(async () => {
      traceZip = await recordTrace(suite.browser);
      await system.processes.get("executor")?.stop("SIGTERM");
      const [testCase] = await addCases(
        system,
        acme.projectId,
        "- name: traced\n  steps:\n    - name: health\n      http: { method: GET, path: /health }\n",
      );
      const run = await acme.pipeline.start({ testCaseIds: [testCase?.id] });
      const testResultId = run.tests[0]?.id ?? "";
      const executor = serviceClient(RunsService, system.env.RUNS_URL ?? "", {
        token: system.env.EXECUTOR_TOKEN ?? "",
      });
      const { assignment } = await executor.claimTest({ testResultId, executorId: "console-test" });
      const leaseToken = assignment?.leaseToken ?? "";
      const put = (kind: ArtifactKind, name: string, contentType: string, content: Buffer, step: number) =>
        executor.putArtifact({ testResultId, leaseToken, kind, name, contentType, content, step });
      traceId = (await put(ArtifactKind.TRACE, "trace", "application/zip", traceZip, 0)).artifact?.id ?? "";
      screenshotId = (await put(ArtifactKind.SCREENSHOT, "failure", "image/png", png, 1)).artifact?.id ?? "";
    });

    it("serves an artifact's bytes to a member of its project only, never cached, sniffed or run", async () => {
      const cookie = await signIn(system, acme.ownerId);
      const trace = await fetch(`${system.consoleUrl}/artifacts/${traceId}`, { headers: { cookie } });
      expect(trace.status).to.equal(200);
      expect(Buffer.from(await trace.arrayBuffer()).equals(traceZip)).to.equal(true);
      expect(trace.headers.get("content-type")).to.equal("application/zip");
      expect(trace.headers.get("content-disposition")).to.equal('attachment; filename="trace.zip"');
      expect(trace.headers.get("cache-control")).to.equal("no-store");
      expect(trace.headers.get("x-content-type-options")).to.equal("nosniff");
      expect(trace.headers.get("content-security-policy")).to.equal(artifactPolicy);
      const image = await fetch(`${system.consoleUrl}/artifacts/${screenshotId}`, { headers: { cookie } });
      expect(image.headers.get("content-type")).to.equal("image/png");
      expect(image.headers.get("content-disposition")).to.equal('inline; filename="failure.png"');
      expect(Buffer.from(await image.arrayBuffer()).equals(png)).to.equal(true);

      // No session: 401; another organization's member, or an unknown id: 404, the same.
      const anonymous = await fetch(`${system.consoleUrl}/artifacts/${traceId}`);
      expect(anonymous.status).to.equal(401);
      expect(anonymous.headers.get("cache-control")).to.equal("no-store");
      const stranger = await newProject(system, "Other org artifacts", { credits: 0 });
      const strangerCookie = await signIn(system, stranger.ownerId);
      const refused = await fetch(`${system.consoleUrl}/artifacts/${traceId}`, {
        headers: { cookie: strangerCookie },
      });
      expect(refused.status).to.equal(404);
      const unknown = await fetch(`${system.consoleUrl}/artifacts/art_unknown`, { headers: { cookie } });
      expect(unknown.status).to.equal(404);
      expect(await refused.text()).to.equal(await unknown.text());
      const rewritten = await fetch(`${system.consoleUrl}/artifacts/${traceId}`, {
        method: "POST",
        headers: { cookie },
      });
      expect(rewritten.status).to.be.oneOf([404, 405]);
    });

    it("opens the trace in the console's viewer with the member's session, under its policy", async () => {
      const page = await signedIn("wide", acme.ownerId);
      const violations = policyViolations(page.context());
      await page.goto(`${system.consoleUrl}/trace-viewer/index.html?trace=/artifacts/${traceId}`);
      // The trace's actions, as recorded by playwright-core.
      await page.getByText("getByRole('button', { name: 'Sign in' })").first().waitFor();
      await page.getByText("getByLabel('Email')").first().click();
      await page.frameLocator("iframe.snapshot-visible").getByRole("heading", { name: "Welcome" }).waitFor();
      await screenshot(page, "trace-viewer-1280");
      expect(violations).to.deep.equal([]);

      // Signed out, the same address loads nothing of it.
      const anonymous = await suite.newPage("wide");
      await anonymous.goto(`${system.consoleUrl}/trace-viewer/index.html?trace=/artifacts/${traceId}`);
      await anonymous.getByText(/Could not load trace/).waitFor();
    });
  });
});

/** The status of a GET sent as a browser's cache sends it (only the given headers). */
function statusOf(url: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on("error", reject);
  });
}

/** Every message of the context's pages and service workers that says a policy refused something. */
function policyViolations(context: BrowserContext): string[] {
  const found: string[] = [];
  const record = (text: string) => {
    if (/Content Security Policy|Content-Security-Policy/i.test(text)) found.push(text);
  };
  context.on("console", (message) => record(message.text()));
  context.on("serviceworker", (worker) => worker.on("console", (message) => record(message.text())));
  context.on("weberror", (error) => record(error.error().message));
  return found;
}

/** A real Playwright trace: a sign-in page, an email typed and a button clicked, recorded by playwright-core. */
async function recordTrace(browser: import("playwright-core").Browser): Promise<Buffer> {
  const target = createServer((_req, res) => {
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(
      '<!doctype html><title>Sign in</title><h1>Welcome</h1><label>Email <input id="email"></label><button type="button">Sign in</button>',
    );
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  const context = await browser.newContext();
  try {
    await context.tracing.start({ screenshots: true, snapshots: true });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${(target.address() as { port: number }).port}/`);
    await page.getByLabel("Email").fill("someone@example.com");
    await page.getByRole("button", { name: "Sign in" }).click();
    const { mkdtemp, readFile, rm } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = await mkdtemp(join(tmpdir(), "trace-"));
    try {
      await context.tracing.stop({ path: join(dir, "trace.zip") });
      return await readFile(join(dir, "trace.zip"));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } finally {
    await context.close();
    target.close();
  }
}
