// Browser steps where the console shows steps read-only, in a real browser against the whole
// system: a test case mixing an HTTP step with browser steps of every action shows each browser
// step as its action and its element in Playwright's words, what a fill types as written
// (`{{NAME}}`, never a value), and whether the test case records a trace at every run. A Viewer
// sees the same. At 1280 and 390 px; the page saved under .tmp/screenshots.
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import { shot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { addCases } from "./pipeline.js";

const journey = `- name: Sign in in the browser
  recordTrace: true
  steps:
    - name: start a session
      http: { method: POST, path: /api/session }
      save: { token: $.token }
    - name: open sign-in
      browser: { goto: { url: "/login?next=%2Fhome" } }
    - name: type the email
      browser: { fill: { locator: { label: Email }, value: "{{EMAIL}}" } }
    - name: submit
      browser: { click: { locator: { role: button, name: Sign in } }, timeoutMs: 5000 }
    - name: confirm with Enter
      browser: { press: { key: Enter } }
    - name: choose a country
      browser: { select: { locator: { testId: country }, options: [de, France] } }
    - name: accept the terms
      browser: { check: { locator: { role: checkbox, name: I agree to the terms and conditions of the shop, exact: true } } }
    - name: no newsletter
      browser: { uncheck: { locator: { label: Newsletter } } }
    - name: open the menu
      browser: { hover: { locator: { css: "nav > ul.menu > li:nth-child(2) > a[href^='/account']", nth: 2 } } }
    - name: spinner gone
      browser: { waitFor: { locator: { testId: spinner }, state: detached } }
    - name: greeting
      browser: { expect: { locator: { testId: greeting }, text: "Hello {{NAME}}" } }
    - name: at home
      browser: { expect: { url: "**/home" } }
    - name: home
      browser: { screenshot: { name: home, fullPage: true } }
`;

describe("console: browser steps shown read-only in a browser", function () {
  this.timeout(90_000);
  const suite = consoleBrowserSuite("Acme browser steps", { credits: 0 });
  let caseId: string;
  let viewerId: string;

  before(async () => {
    const [created] = await addCases(suite.system, suite.project.projectId, journey);
    caseId = created?.id ?? "";
    viewerId = (await suite.member("viewer@acme-browser-steps.example", Role.VIEWER)).id;
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`a test case page shows each browser step's action, element and value as written (${viewports[width].width} px)`, async () => {
      const page = await suite.signedIn(width, width === "wide" ? suite.project.ownerId : viewerId);
      await page.goto(`${suite.system.consoleUrl}/projects/${suite.project.projectId}/test-cases/${caseId}`);
      await page.getByRole("heading", { name: "Sign in in the browser", level: 1 }).waitFor();
      const step = (name: string) =>
        page
          .locator("li.step")
          .filter({ has: page.getByRole("heading", { name: new RegExp(`^Step \\d+: ${name}$`), level: 3 }) });
      // What the step's body says, without what only screen readers hear ("In the browser: ").
      const words = async (name: string) =>
        (await step(name).locator(".step-body").innerText())
          .replace(/\s+/g, " ")
          .replace("In the browser: ", "")
          .trim();
      expect(await words("start a session")).to.match(/^POST \/api\/session/);
      expect(await words("open sign-in")).to.equal("goto /login?next=%2Fhome");
      expect(await words("type the email")).to.equal("fill getByLabel('Email') Types “{{EMAIL}}”");
      expect(await words("submit")).to.equal(
        "click getByRole('button', { name: 'Sign in' }) · times out after 5.0 s",
      );
      expect(await words("confirm with Enter")).to.equal("press Enter On the element that has the focus");
      expect(await words("choose a country")).to.equal(
        "select getByTestId('country') Chooses “de”, “France”",
      );
      expect(await words("no newsletter")).to.equal("uncheck getByLabel('Newsletter')");
      expect(await words("spinner gone")).to.equal(
        "wait for getByTestId('spinner') Until it is gone from the page",
      );
      expect(await words("greeting")).to.equal(
        "expect getByTestId('greeting') Text contains “Hello {{NAME}}”",
      );
      expect(await words("at home")).to.equal("expect URL **/home");
      expect(await words("home")).to.equal("screenshot home Of the whole page");
      // Screen readers hear that the step is a browser's.
      expect(await step("submit").getByText("In the browser:").count()).to.equal(1);
      expect(await page.getByText("A kind of step this console does not show yet.").count()).to.equal(0);
      const trace = page.locator(".facts-grid div").filter({ hasText: "Browser trace" });
      expect((await trace.innerText()).replace(/\s+/g, " ")).to.contain("Recorded at every run");
      await shot(page, "test-case-browser-steps", width);
    });
  }
});
