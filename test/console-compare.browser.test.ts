// The Compare view in the console (issue 41), through the whole system: two runs of the same tags on
// one environment against a target that changes between them, runs started over REST with a real
// executor. Between the runs a case's step changes (a new version expecting 201), a case is added and
// a variable is set. The second run's comparison says so: the counts, the differences in order
// (newly failing, fixed, still failing since the first run, new), the step diff, the variable's name
// and never its value, the unchanged test behind a toggle; the first run has no base, and names the
// second as its base through the picker (`?base=`); an unknown base says so. At 1280 and 390 px.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createCliContext, createEnvironment, importContent, readCaseFile, setVariable } from "@testrun/cli";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { horizontalOverflow, shot } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { addCases, type RunBody } from "./pipeline.js";

const caseYaml = (name: string, path: string, status = 200) =>
  `- name: ${name}\n  tags: [compared]\n  steps:\n    - name: open it\n      http: { method: GET, path: "${path}" }\n      expect: { status: ${status} }\n`;

/** /search fails until the second phase; /billing always fails; the rest answer 200. */
function startTarget(phase: { second: boolean }): Server {
  return createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://target").pathname;
    const failing = path === "/billing" || (path === "/search" && !phase.second);
    res.writeHead(failing ? 500 : 200, { "content-type": "text/plain" }).end(failing ? "down" : "ok");
  }).listen(0, "127.0.0.1");
}

describe("comparing runs in the console", function () {
  this.timeout(180_000);
  const suite = consoleBrowserSuite("Acme compare", { credits: 40 });
  const phase = { second: false };
  const secret = "tok-7f3a9c-never-shown";
  let target: Server;
  let first: RunBody;
  let second: RunBody;

  before(async () => {
    target = startTarget(phase);
    await once(target, "listening");
    const { port } = target.address() as AddressInfo;
    const ctx = createCliContext(suite.system.env);
    const projectId = suite.project.projectId;
    await createEnvironment(ctx, { projectId, name: "target", baseUrl: `http://127.0.0.1:${port}` });
    await addCases(
      suite.system,
      projectId,
      caseYaml("Home answers", "/home") +
        caseYaml("Checkout answers", "/checkout") +
        caseYaml("Search answers", "/search") +
        caseYaml("Billing answers", "/billing"),
    );
    const run = async () =>
      suite.project.pipeline.finished(
        (await suite.project.pipeline.start({ tags: ["compared"], environment: "target" })).id,
      );
    first = await run();
    // Between the runs: Checkout's step now expects 201 (version 2), Search gets a second step and
    // its page is back, a case is added and a variable set.
    await importContent(ctx, {
      projectId,
      document: readCaseFile(
        caseYaml("Checkout answers", "/checkout", 201) +
          caseYaml("Search answers", "/search") +
          "    - name: and its help\n      http: { method: GET, path: /search/help }\n      expect: { status: 200 }\n",
        "cases.yaml",
      ),
    });
    await addCases(suite.system, projectId, caseYaml("Reports answer", "/reports"));
    await setVariable(ctx, { projectId, name: "API_TOKEN", value: secret });
    phase.second = true;
    second = await run();
    suite.secrets.push(secret);
  });
  after(() => target?.close());

  const headings = (page: Page) => page.locator(".compare-group h3").allInnerTexts();
  const row = (page: Page, name: string) => page.locator(".compare-test").filter({ hasText: name });

  for (const width of ["wide", "narrow"] as const) {
    it(`shows what changed since the previous run, the differences first (${width})`, async () => {
      const page = await suite.signedIn(width, suite.project.ownerId);
      // The way in: the run page's Compare link, to the url the CLI and the REST API give.
      await page.goto(second.url);
      await page.getByRole("link", { name: "Compare", exact: true }).click();
      await page.waitForURL(`${second.url}/compare`);
      await page.getByRole("heading", { level: 1, name: "Compare" }).waitFor();
      const summary = await page.locator(".compare-summary").innerText();
      expect(summary).to.equal(
        `Run ${second.id} compared with run ${first.id} (previous run on target, same name).`,
      );

      const counts = await page.getByRole("group", { name: "Tests per change" }).innerText();
      for (const [change, n] of [
        ["Newly failing", 1],
        ["Fixed", 1],
        ["Flaky", 0],
        ["Still failing", 1],
        ["New", 1],
        ["Removed", 0],
        ["Unchanged", 1],
      ] as const)
        expect(counts).to.match(new RegExp(`(^|\\n|\\s)${change}\\s*${n}(\\s|$)`));
      expect(await headings(page)).to.deep.equal([
        "Newly failing (1)",
        "Fixed (1)",
        "Still failing (1)",
        "New (1)",
      ]);

      const around = await page.getByRole("region", { name: "What changed around the tests" }).innerText();
      expect(around).to.contain("1 variable added: API_TOKEN");
      expect(around).to.contain("1 test case added: Reports answer");
      expect(around).to.contain("2 test cases ran another version");
      expect(await page.content()).not.to.contain(secret);

      // The newly failing test: its version and the step that changed, field by field.
      const checkout = row(page, "Checkout answers");
      const checkoutText = await checkout.innerText();
      expect(checkoutText).to.contain("Passed in the base, failed now");
      expect(checkoutText).to.contain("Test case version 1 → 2");
      expect(checkoutText).to.contain("Step 1 changed: open it");
      expect(checkoutText).to.match(/expect\.status\S*\s+200\s+→\s+201/);
      const runLinks = checkout.getByRole("link", { name: "Result in this run" });
      expect(await runLinks.getAttribute("href")).to.match(
        new RegExp(
          `/runs/${second.id}/tests/${second.tests.find((t) => t.name === "Checkout answers")?.id}$`,
        ),
      );
      expect(
        await checkout.getByRole("link", { name: "Result in the base run" }).getAttribute("href"),
      ).to.match(new RegExp(`/runs/${first.id}/tests/tr_`));
      expect(await checkout.getByRole("link", { name: "Failure group" }).getAttribute("href")).to.match(
        /\/failures\/fg_[0-9a-z]+$/,
      );
      expect(await row(page, "Billing answers").innerText()).to.contain(`failing since run ${first.id}`);
      const search = await row(page, "Search answers").innerText();
      expect(search).to.contain("Failed in the base, passed now");
      expect(search).to.contain("Step 2 added: and its help");
      // The added step whole, as its JSON on one line.
      const added = await row(page, "Search answers").locator(".step-diff-whole").innerText();
      expect(added).to.match(/^\+ \{.*\}$/);
      expect(added).to.contain('"name":"and its help"').and.contain('"/search/help"');
      expect(await row(page, "Reports answer").innerText()).to.contain("Not in the base, passed now");

      // The unchanged test stays folded until asked for.
      expect(await row(page, "Home answers").isVisible()).to.equal(false);
      const toggle = page.getByRole("button", { name: "Show 1 unchanged test" });
      await toggle.focus();
      await page.keyboard.press("Enter");
      await row(page, "Home answers").waitFor();
      expect(
        await page.getByRole("button", { name: "Hide 1 unchanged test" }).getAttribute("aria-expanded"),
      ).to.equal("true");
      await checkout.scrollIntoViewIfNeeded();
      await shot(page, "compare-previous", width);
      if (width === "narrow") expect(await horizontalOverflow(page)).to.equal(0);

      // A count is a filter, by keyboard too, kept in the URL.
      await page.getByRole("button", { name: /^Fixed/ }).focus();
      await page.keyboard.press("Space");
      await page.waitForURL(/change=fixed/);
      await page.locator(".compare-group h3", { hasText: "Newly failing" }).waitFor({ state: "detached" });
      expect(await headings(page)).to.deep.equal(["Fixed (1)"]);
      expect(await page.getByRole("button", { name: /^Fixed/ }).getAttribute("aria-pressed")).to.equal(
        "true",
      );
    });
  }

  it("has no base for the first run, then compares it with a run chosen in the picker (?base=)", async () => {
    const page = await suite.signedIn("narrow", suite.project.ownerId);
    await page.goto(`${first.url}/compare`);
    await page.getByText("No base run to compare with", { exact: true }).waitFor();
    expect(await page.locator(".compare-summary").innerText()).to.equal(
      `Run ${first.id}: no base run to compare with.`,
    );
    expect(await page.locator(".compare-test").count()).to.equal(0);
    await shot(page, "compare-no-base", "narrow");
    expect(await horizontalOverflow(page)).to.equal(0);

    await page.getByLabel("Compare with").selectOption(second.id);
    await page.getByRole("button", { name: "Compare", exact: true }).click();
    await page.waitForURL(`${first.url}/compare?base=${second.id}`);
    await page.getByText(`Run ${first.id} compared with run ${second.id} (chosen as the base).`).waitFor();
    // Against the later run everything turns around: the variable removed, Reports not run.
    const around = await page.getByRole("region", { name: "What changed around the tests" }).innerText();
    expect(around).to.contain("1 variable removed: API_TOKEN");
    expect(around).to.contain("1 test case removed: Reports answer");
    expect(await headings(page)).to.deep.equal([
      "Newly failing (1)",
      "Fixed (1)",
      "Still failing (1)",
      "Removed (1)",
    ]);
    const search = await row(page, "Search answers").innerText();
    expect(search).to.contain("Passed in the base, failed now");
    expect(search).to.contain("Step 2 removed: and its help");
    expect(await row(page, "Reports answer").innerText()).to.contain("Passed in the base, not in this run");
    expect(await page.content()).not.to.contain(secret);
    await shot(page, "compare-named", "narrow");
    expect(await horizontalOverflow(page)).to.equal(0);

    // Back to the rule's base: there is none.
    await page.getByRole("link", { name: "Previous run" }).click();
    await page.getByText("No base run to compare with", { exact: true }).waitFor();
  });

  it("says so when the base named in the URL is no run of this project", async () => {
    const page = await suite.signedIn("wide", suite.project.ownerId);
    const unknown = "run_00000000000000000000000000";
    await page.goto(`${second.url}/compare?base=${unknown}`);
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.innerText()).to.contain(`There is no run ${unknown} in this project to compare with.`);
    await shot(page, "compare-unknown-base", "wide");
    await alert.getByRole("link", { name: "Compare with the previous run" }).click();
    await page.getByText(`Run ${second.id} compared with run ${first.id}`).waitFor();
    expect(await page.getByRole("link", { name: "Previous run" }).count()).to.equal(0);
  });
});
