// Issue 24's "done when", as a new customer lives it: an operator runs `testrunctl org create` once
// (and grants credits, billing being the operator's); from then on the organization's owner does
// everything in the console alone: a project, an environment, a variable, three test cases (two
// in the form, one in the JSON view), a plan of them, a run of the plan from the console, an API
// key in API & CI; then a pipeline runs the same plan with `testrun run`. Both runs PASSED.

import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { demoCredentials } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, screenshot, viewports } from "./browser.js";
import { sharedTestSystem } from "./pipeline.js";
import { cliEnv, runCli } from "./testrun-cli.js";

const testrunctl = new URL("../services/cli/bin/testrunctl", import.meta.url).pathname;

describe("a new organization's owner builds and runs a project in the console alone", function () {
  this.timeout(240_000);
  let system: System;
  let browser: Browser;
  before(async () => {
    system = await sharedTestSystem();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  /** testrunctl as the operator runs it: the services' URLs and the service token, nothing else. */
  const operator = async (...args: string[]) => {
    const run = await runCli(args, { PATH: String(process.env.PATH), ...system.env }, testrunctl);
    expect(run.code, `testrunctl ${args.join(" ")}: ${run.stderr}`).to.equal(0);
    return JSON.parse(run.stdout);
  };

  /** A new test case from the editor's form: one GET step expecting `status`. */
  const formCase = async (page: Page, name: string, path: string, status: string) => {
    await page.getByRole("link", { name: "New test case" }).first().click();
    await page.getByRole("heading", { name: "New test case", level: 1 }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill(name);
    const step = page.locator(".steps-editor > li").first();
    await step.getByLabel("Step name").fill(`get ${path}`);
    await step.getByLabel("Path").fill(path);
    await step.getByLabel("Expected status").fill(status);
    await page.getByRole("button", { name: "Create test case" }).click();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
  };

  it("from `testrunctl org create` to a plan PASSED in the console and with `testrun run`", async () => {
    const { organization, owner } = await operator(
      "org",
      "create",
      "Journey Co",
      "--owner-email",
      "jo@journey.example",
      "--owner-name",
      "Jo",
      "--json",
    );
    const page = await (await browser.newContext({ viewport: viewports.wide })).newPage();
    await openSignInLink(page, system, owner.id);

    // A project.
    await page.goto(`${system.consoleUrl}/orgs/${organization.id}`);
    await page.getByRole("button", { name: "New project" }).click();
    const newProject = page.getByRole("dialog", { name: "New project" });
    await newProject.getByLabel("Name", { exact: true }).fill("Shop");
    await newProject.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { name: "Shop", level: 1 }).waitFor();
    const projectId = new URL(page.url()).pathname.split("/")[2] ?? "";
    expect(projectId).to.match(/^prj_/);
    const at = (path: string) => `${system.consoleUrl}/projects/${projectId}${path}`;
    await operator("credits", "grant", "20", "--project", projectId, "--reason", "trial", "--json");

    // An environment, the default, on the system under test.
    await page.goto(at("/environments"));
    await page.getByRole("button", { name: "New environment" }).click();
    const environment = page.getByRole("dialog", { name: "New environment" });
    await environment.getByLabel("Name", { exact: true }).fill("shop");
    await environment.getByLabel("Base URL").fill(system.demoTargetUrl);
    await environment.getByRole("checkbox", { name: /Default environment/ }).check();
    await environment.getByRole("button", { name: "Create environment" }).click();
    await page.getByRole("row", { name: /shop/ }).waitFor();

    // A variable: the password, written once, never shown again.
    await page.goto(at("/variables"));
    await page.getByRole("button", { name: "New variable" }).click();
    const variable = page.getByRole("dialog", { name: "New variable" });
    await variable.getByLabel("Name", { exact: true }).fill("SHOP_PASSWORD");
    await variable.getByLabel("Value").fill(demoCredentials.password);
    await variable.getByRole("button", { name: "Create variable" }).click();
    await page.getByRole("row", { name: /SHOP_PASSWORD/ }).waitFor();

    // Three test cases: two in the form, one written in the JSON view (a saved token, the variable).
    await page.goto(at("/test-cases"));
    await formCase(page, "health answers", "/health", "200");
    await page.goto(at("/test-cases"));
    await formCase(page, "unknown page is a 404", "/no-such-page", "404");
    await page.goto(at("/test-cases"));
    await page.getByRole("link", { name: "New test case" }).first().click();
    await page.getByRole("button", { name: "JSON", exact: true }).click();
    const login = {
      name: "log in and read the profile",
      tags: ["auth"],
      steps: [
        {
          name: "log in",
          http: {
            method: "POST",
            path: "/api/login",
            json: { user: demoCredentials.user, password: "{{SHOP_PASSWORD}}" },
          },
          expect: { status: 200, json: { "$.ok": true } },
          save: { token: "$.token" },
        },
        {
          name: "read the profile",
          http: { method: "GET", path: "/api/profile", headers: { authorization: "Bearer {{token}}" } },
          expect: { status: 200 },
        },
      ],
    };
    await page.getByLabel("The test case as JSON").fill(JSON.stringify(login, null, 2));
    await page.getByRole("button", { name: "Create test case" }).click();
    await page.getByRole("heading", { name: login.name, level: 1 }).waitFor();
    await page.getByRole("heading", { name: "2 steps" }).waitFor();
    await screenshot(page, "journey-test-case-1280");

    // A plan of the three, in the order picked.
    await page.goto(at("/test-plans"));
    await page.getByRole("link", { name: "New test plan" }).first().click();
    await page.getByLabel("Name", { exact: true }).fill("Release check");
    const picker = page.getByRole("region", { name: "Add test cases" });
    for (const name of ["health answers", "log in and read the profile", "unknown page is a 404"])
      await picker.getByRole("checkbox", { name: new RegExp(`^${name}\\b`) }).check();
    await page.getByRole("button", { name: "Create test plan" }).click();
    await page.getByRole("heading", { name: "Release check", level: 1 }).waitFor();

    // The plan run from the console, followed live to PASSED.
    await page.goto(at("/runs"));
    await page.getByRole("button", { name: "Start run" }).first().click();
    const start = page.getByRole("dialog", { name: "Start run" });
    await start
      .getByRole("combobox", { name: "Test plan" })
      .selectOption({ label: "Release check (3 test cases)" });
    await start.getByText(/^3 tests · 3 credits · balance 20$/).waitFor();
    await start.getByRole("button", { name: "Start run" }).click();
    await page.waitForURL(/\/runs\/run_[0-9a-z]+$/);
    await page.getByRole("heading", { level: 1, name: /Passed$/ }).waitFor({ timeout: 90_000 });
    await screenshot(page, "journey-console-run-passed-1280");

    // A key in API & CI, then the pipeline runs the same plan.
    await page.goto(at("/settings/api"));
    await page.getByRole("button", { name: "Create API key" }).click();
    const keyDialog = page.getByRole("dialog");
    await keyDialog.getByLabel("Name").fill("CI");
    await keyDialog.getByRole("button", { name: /^Create/ }).click();
    const secret = await keyDialog.getByLabel("Secret key").inputValue();
    expect(secret).to.match(/^trk_/);
    const pipeline = await runCli(["run", "--plan", "Release check"], cliEnv(system.gatewayUrl, secret));
    expect(pipeline.code, pipeline.stderr).to.equal(0);
    expect(pipeline.stdout + pipeline.stderr).to.match(/PASSED: 3 passed, 0 failed of 3\b/);
    await page.goto(at("/runs"));
    // Both runs of the plan listed: the console's and the pipeline's.
    await page
      .getByRole("row", { name: /Release check/ })
      .nth(1)
      .waitFor();
    expect(await page.getByRole("row", { name: /Release check/ }).count()).to.equal(2);
    await screenshot(page, "journey-runs-1280");
  });
});
