import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fromJson } from "@bufbuild/protobuf";
import { readTestCaseFile } from "@testrun/cli";
import { type BrowserStep, BrowserStepSchema, type Locator } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { repoRoot } from "@testrun/testing";
import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { parse } from "yaml";
import { launchBrowser, screenshot } from "../../../test/browser.js";
import { runSteps } from "../src/steps/runner.js";
import { localEgress } from "./target.js";

/** The demo target started as `make run` starts it: its own process, from its entry. */
async function startDemoTarget(env: Record<string, string>): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ["--conditions=source", "--import", "tsx", `${repoRoot}services/executor/src/demo-target/main.ts`],
    { cwd: repoRoot, env: { ...process.env, PORT: "0", ...env }, stdio: ["ignore", "pipe", "inherit"] },
  );
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg === "listening") return { url: `http://127.0.0.1:${entry.port}`, process: child };
  }
  throw new Error("the demo target exited before listening");
}

describe("demo target", () => {
  const credentials = { DEMO_USER: "demo", DEMO_PASSWORD: "demo-password", DEMO_EMAIL: "demo@demo.example" };
  let target: { url: string; process: ChildProcess };
  before(async () => {
    target = await startDemoTarget(credentials);
  });
  after(async () => {
    target.process.kill("SIGTERM");
    if (target.process.exitCode === null) await once(target.process, "exit");
  });

  const login = (body: string) =>
    fetch(`${target.url}/api/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });

  it("answers /health with ok", async () => {
    const response = await fetch(`${target.url}/health`);
    expect(response.status).to.equal(200);
    expect(await response.text()).to.equal("ok");
  });

  it("logs the configured user in, and the token opens the profile", async () => {
    const response = await login(JSON.stringify({ user: "demo", password: "demo-password" }));
    expect(response.status).to.equal(200);
    const body = (await response.json()) as { ok: boolean; token: string };
    expect(body.ok).to.equal(true);
    expect(body.token).to.be.a("string").with.length.above(20);
    const profile = await fetch(`${target.url}/api/profile`, {
      headers: { authorization: `Bearer ${body.token}` },
    });
    expect(profile.status).to.equal(200);
    expect(await profile.json()).to.deep.equal({ ok: true, user: "demo" });
  });

  it("refuses a wrong password (401), a body that is not JSON (400), and a profile without a valid token", async () => {
    expect((await login(JSON.stringify({ user: "demo", password: "nope" }))).status).to.equal(401);
    expect((await login("not json")).status).to.equal(400);
    expect((await fetch(`${target.url}/api/profile`)).status).to.equal(401);
    const forged = await fetch(`${target.url}/api/profile`, { headers: { authorization: "Bearer forged" } });
    expect(forged.status).to.equal(401);
  });

  it("answers 404 anywhere else, and to a known path with another method", async () => {
    expect((await fetch(`${target.url}/no-such-page`)).status).to.equal(404);
    expect((await fetch(`${target.url}/api/login`)).status).to.equal(404);
  });

  it("passes the seeded Smoke plan's test cases with the seeded variables", async () => {
    const file = `${repoRoot}scripts/demo/test-cases.yaml`;
    const cases = readTestCaseFile(readFileSync(file, "utf8"), file);
    const outcomes = Object.fromEntries(
      await Promise.all(
        cases.map(async (c) => [
          c.name,
          await runSteps(c.steps, { baseUrl: target.url, variables: credentials, egress: localEgress }),
        ]),
      ),
    );
    expect(outcomes["health answers"]).to.include({ passed: true });
    expect(outcomes["log in with the demo user"]).to.include({ passed: true, summary: "2 steps passed" });
  });

  it("fails a login expectation it does not meet, with a summary naming the step and both statuses", async () => {
    // The shape of the case proposed for scripts/demo/test-cases.yaml, so the demo shows a failure.
    const [wrongPassword] = readTestCaseFile(
      `name: a wrong password is forbidden
steps:
  - name: log in with a wrong password
    http: { method: POST, path: /api/login, json: { user: "{{DEMO_USER}}", password: "wrong" } }
    expect: { status: 403 }
`,
      "case.yaml",
    );
    const outcome = await runSteps(wrongPassword?.steps ?? [], {
      baseUrl: target.url,
      variables: credentials,
      egress: localEgress,
    });
    expect(outcome).to.include({
      passed: false,
      summary: 'step 1 "log in with a wrong password": expected status 403, got 401',
    });
  });

  describe("web app (the demo's browser test cases run against it)", () => {
    /** Posts a form as a browser does, without following the redirect. */
    const post = (path: string, form: Record<string, string>, cookie = "") =>
      fetch(`${target.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams(form).toString(),
        redirect: "manual",
      });
    const signIn = async () => {
      const response = await post("/login", { email: "demo@demo.example", password: "demo-password" });
      expect(response.status).to.equal(303);
      expect(response.headers.get("location")).to.equal("/account");
      return (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    };

    it("serves the sign-in form with labelled fields, under a policy that allows no inline script", async () => {
      const response = await fetch(`${target.url}/login`);
      expect(response.status).to.equal(200);
      expect(response.headers.get("content-security-policy"))
        .to.contain("script-src 'self'")
        .and.not.contain("unsafe-inline");
      const html = await response.text();
      expect(html)
        .to.contain('<label for="email">Email</label>')
        .and.contain('<label for="password">Password</label>');
      expect(html).to.contain('<button type="submit">Sign in</button>');
      expect(html, "inline scripts").to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    });

    it("signs the configured email in with a session cookie and greets by name; refuses a wrong password", async () => {
      const refused = await post("/login", { email: "demo@demo.example", password: "wrong" });
      expect(refused.status).to.equal(401);
      expect(await refused.text())
        .to.contain('role="alert"')
        .and.contain("Wrong email or password.");
      const cookie = await signIn();
      expect(cookie).to.match(/^demo_session=.{20,}/);
      const account = await fetch(`${target.url}/account`, { headers: { cookie } });
      expect(await account.text()).to.contain('<h1 data-testid="greeting">Hello, demo</h1>');
    });

    it("keeps the order form behind sign-in, names each wrong field, and confirms an order", async () => {
      const anonymous = await fetch(`${target.url}/order`, { redirect: "manual" });
      expect(anonymous.status).to.equal(303);
      expect(anonymous.headers.get("location")).to.equal("/login");
      const cookie = await signIn();
      const wrong = await post("/order", { name: "", quantity: "11", plan: "Gold" }, cookie);
      expect(wrong.status).to.equal(400);
      const errors = await wrong.text();
      for (const name of ["name", "quantity", "plan"])
        expect(errors).to.contain(`aria-invalid="true" aria-describedby="${name}-error"`);
      const placed = await post(
        "/order",
        { name: "Ada <Lovelace>", quantity: "2", plan: "Enterprise", newsletter: "on" },
        cookie,
      );
      expect(placed.status).to.equal(200);
      expect(await placed.text()).to.match(
        /placed: 2 × Enterprise for Ada &lt;Lovelace&gt;\. You will get the newsletter\./,
      );
    });

    it("answers the reports page's request with 500, on purpose", async () => {
      expect((await fetch(`${target.url}/reports`)).status).to.equal(200);
      expect((await fetch(`${target.url}/api/report`)).status).to.equal(500);
    });
  });

  describe("the demo project's browser test cases (scripts/demo/browser-test-cases.yaml)", function () {
    this.timeout(60_000);
    const file = `${repoRoot}scripts/demo/browser-test-cases.yaml`;
    const cases = (
      parse(readFileSync(file, "utf8")) as { name: string; steps: { name: string; browser: unknown }[] }[]
    ).map((c) => ({
      name: c.name,
      // As the content file format reads them: BrowserStep's proto JSON, unknown fields refused.
      steps: c.steps.map((step) => ({
        name: step.name,
        browser: fromJson(BrowserStepSchema, step.browser as never),
      })),
    }));
    let browser: Browser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
    });

    /** Runs a case's steps in a fresh context, as Playwright calls (the executor's own runner is tested with the executor). */
    async function play(steps: { name: string; browser: BrowserStep }[]) {
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        for (const [index, step] of steps.entries()) {
          try {
            await act(page, step.browser);
          } catch (error) {
            return { passed: false, failedStep: index + 1, page, why: (error as Error).message, context };
          }
        }
        return { passed: true, failedStep: 0, page, why: "", context };
      } catch (error) {
        await context.close();
        throw error;
      }
    }
    const substitute = (text: string) =>
      text.replace(
        /\{\{(\w+)\}\}/g,
        (_, name: string) => credentials[name as keyof typeof credentials] ?? "",
      );
    const find = (page: Page, locator: Locator | undefined) => {
      const by = locator?.by;
      const exact = locator?.exact || undefined;
      switch (by?.case) {
        case "role":
          return page.getByRole(by.value as never, { name: locator?.name || undefined, exact });
        case "label":
          return page.getByLabel(by.value, { exact });
        case "text":
          return page.getByText(by.value, { exact });
        case "testId":
          return page.getByTestId(by.value);
        case "placeholder":
          return page.getByPlaceholder(by.value, { exact });
        case "css":
          return page.locator(by.value);
        default:
          throw new Error("a locator without a kind");
      }
    };
    async function act(page: Page, step: BrowserStep) {
      const timeout = step.timeoutMs || 5_000;
      const action = step.action;
      switch (action.case) {
        case "goto":
          await page.goto(new URL(action.value.url, target.url).toString(), { timeout });
          return;
        case "click":
          await find(page, action.value.locator).click({ timeout });
          return;
        case "fill":
          await find(page, action.value.locator).fill(substitute(action.value.value), { timeout });
          return;
        case "select":
          await find(page, action.value.locator).selectOption(action.value.options, { timeout });
          return;
        case "check":
          await find(page, action.value.locator).check({ timeout });
          return;
        case "expect": {
          if (action.value.check.case !== "text") throw new Error(`no check ${action.value.check.case} here`);
          const wanted = action.value.check.value;
          const element = find(page, action.value.locator);
          const deadline = Date.now() + timeout;
          for (;;) {
            const text = (await element.textContent({ timeout }).catch(() => "")) ?? "";
            if (text.includes(wanted)) return;
            if (Date.now() > deadline) throw new Error(`expected text "${wanted}", got "${text}"`);
            await page.waitForTimeout(50);
          }
        }
        case "screenshot":
          await page.screenshot({ fullPage: action.value.fullPage });
          return;
        default:
          throw new Error(`no action ${action.case} in the demo's cases`);
      }
    }

    it("has two cases, tagged browser, whose steps are valid browser steps", () => {
      expect(cases.map((c) => c.name)).to.deep.equal([
        "sign in and place an order",
        "the monthly report loads",
      ]);
    });

    it("passes 'sign in and place an order': signs in, fills the form and sees the order confirmed", async () => {
      const outcome = await play(cases[0]?.steps ?? []);
      await screenshot(outcome.page, "demo-order-placed");
      await outcome.context.close();
      expect(outcome).to.include({ passed: true, why: "" });
    });

    it("fails 'the monthly report loads' at its last step, the page showing the error instead", async () => {
      const steps = cases[1]?.steps ?? [];
      const outcome = await play(steps);
      await screenshot(outcome.page, "demo-report-failed");
      const alert = await outcome.page.getByRole("alert").textContent();
      await outcome.context.close();
      expect(outcome).to.include({ passed: false, failedStep: steps.length });
      expect(outcome.why).to.equal('expected text "Report ready", got ""');
      expect(alert).to.equal("Could not load the report: the server answered 500.");
    });
  });
});
