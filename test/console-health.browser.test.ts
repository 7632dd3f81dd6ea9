// Test health in the console (issue 40), through the whole system: a target whose /checkout fails
// its second request only and whose /search always fails, runs started over REST with a real
// executor. The health page lists the case failing every run as "Failing" and the other as "Flaky"
// with its interval; the flaky case's page shows its results as a strip of links and proposes a
// quarantine; an Editor quarantines the failing case (a Viewer sees it read-only) and its next
// failure leaves the run PASSED with "1 quarantined failure, not failing the run"; the Editor lifts
// it. At 1280 and 390 px, with screenshots.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createCliContext, createEnvironment } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import { horizontalOverflow, shot } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { addCases, type RunBody } from "./pipeline.js";

function startTarget(): Server {
  let checkouts = 0;
  return createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://target").pathname;
    if (path === "/checkout") checkouts += 1;
    const failing = (path === "/checkout" && checkouts === 2) || path === "/search";
    res.writeHead(failing ? 500 : 200, { "content-type": "text/plain" }).end(failing ? "down" : "ok");
  }).listen(0, "127.0.0.1");
}

const cases = JSON.stringify([
  {
    name: "Checkout answers",
    tags: ["checkout"],
    steps: [{ name: "open", http: { method: "GET", path: "/checkout" }, expect: { status: 200 } }],
  },
  {
    name: "Search answers",
    tags: ["search"],
    steps: [{ name: "search", http: { method: "GET", path: "/search" }, expect: { status: 200 } }],
  },
]);

describe("test health and quarantine in the console", function () {
  this.timeout(180_000);
  const suite = consoleBrowserSuite("Acme health", { credits: 40 });
  let target: Server;
  let editorId: string;
  let viewerId: string;
  let checkoutId: string;
  let searchId: string;
  const path = (rest: string) => `${suite.system.consoleUrl}/projects/${suite.project.projectId}${rest}`;

  before(async () => {
    target = startTarget();
    await once(target, "listening");
    const { port } = target.address() as AddressInfo;
    await createEnvironment(createCliContext(suite.system.env), {
      projectId: suite.project.projectId,
      name: "target",
      baseUrl: `http://127.0.0.1:${port}`,
    });
    await addCases(suite.system, suite.project.projectId, cases);
    editorId = (await suite.member("eddie@acme-health.example", Role.EDITOR)).id;
    viewerId = (await suite.member("vera@acme-health.example", Role.VIEWER)).id;
    const run = async (tag: string) =>
      suite.project.pipeline.finished(
        (await suite.project.pipeline.start({ tags: [tag], environment: "target" })).id,
      );
    // Six results of Checkout, the second failed: flaky (1 of 6); three of Search, all failed.
    for (let i = 0; i < 6; i += 1) checkoutId = (await run("checkout")).tests[0]?.testCaseId ?? "";
    for (let i = 0; i < 3; i += 1) searchId = (await run("search")).tests[0]?.testCaseId ?? "";
  });
  after(() => target?.close());

  for (const width of ["wide", "narrow"] as const) {
    it(`lists the failing case first and the flaky one with its interval (${width})`, async () => {
      const page = await suite.signedIn(width, suite.project.ownerId);
      await page.goto(path("/test-health"));
      await page.getByRole("heading", { level: 1, name: "Test health" }).waitFor();
      const rows = page.getByRole("row");
      await rows.filter({ hasText: "Checkout answers" }).waitFor();
      const checkout = await rows.filter({ hasText: "Checkout answers" }).innerText();
      expect(checkout).to.match(/Flaky/);
      expect(checkout).to.match(/1 of 6 failed \(\d+–\d+%\)/);
      const search = await rows.filter({ hasText: "Search answers" }).innerText();
      expect(search).to.match(/Failing/);
      // By impact: the failing case above the flaky one.
      const names = await page.getByRole("row").allInnerTexts();
      expect(names.findIndex((t) => t.includes("Search"))).to.be.lessThan(
        names.findIndex((t) => t.includes("Checkout")),
      );
      const counts = await page.getByRole("list", { name: "Test cases per state" }).innerText();
      expect(counts).to.match(/Failing\s*1/);
      expect(counts).to.match(/Flaky\s*1/);
      // The state filter narrows it, in the URL.
      await page.getByLabel("State", { exact: true }).selectOption("flaky");
      await page.waitForURL(/state=flaky/);
      await rows.filter({ hasText: "Search answers" }).waitFor({ state: "detached" });
      await shot(page, "health-page", width);
      if (width === "narrow") expect(await horizontalOverflow(page)).to.equal(0);
    });
  }

  it("shows a case's latest results as links and proposes quarantine for a flaky case", async () => {
    const page = await suite.signedIn("wide", editorId);
    await page.goto(path(`/test-cases/${checkoutId}`));
    const strip = page.getByRole("navigation", { name: "Latest 6 results, newest first" });
    await strip.waitFor();
    expect(await strip.getByRole("link").count()).to.equal(6);
    expect(await strip.getByRole("link").nth(4).getAttribute("aria-label")).to.match(/^Failed in /);
    await page.getByText("This test case is flaky").waitFor();
    await page.getByText(/Last failed in run run_/).waitFor();
    await page.getByRole("region", { name: "Health" }).scrollIntoViewIfNeeded();
    await shot(page, "health-case-flaky", "wide");
    // A link of the strip opens that result's test page.
    await strip.getByRole("link").nth(4).click();
    await page.getByRole("heading", { level: 1, name: /Checkout answers/ }).waitFor();
  });

  it("lets an Editor quarantine a failing case, so its next failure leaves the run PASSED, and lift it", async () => {
    const viewer = await suite.signedIn("narrow", viewerId);
    await viewer.goto(path(`/test-cases/${searchId}`));
    await viewer.getByRole("heading", { level: 2, name: "Health" }).waitFor();
    await viewer
      .getByText(/Failing since/)
      .first()
      .waitFor();
    expect(await viewer.getByRole("button", { name: "Quarantine" }).count()).to.equal(0);

    const page = await suite.signedIn("wide", editorId);
    await page.goto(path(`/test-cases/${searchId}`));
    await page.getByRole("button", { name: "Quarantine", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Quarantine Search answers?" });
    expect(await dialog.getByLabel("Days").inputValue()).to.equal("14");
    await dialog.getByLabel("Days").fill("91");
    await dialog.getByText("From 1 to 90 days.").waitFor();
    expect(await dialog.getByRole("button", { name: "Quarantine" }).isDisabled()).to.equal(true);
    await dialog.getByLabel("Days").fill("7");
    await dialog.getByLabel("Reason").fill("search index rebuild, INC-42");
    await dialog.getByLabel("Reason").press("Enter");
    const facts = page.getByRole("region", { name: "Quarantine" });
    await facts.getByText("search index rebuild, INC-42").waitFor();
    expect(await facts.innerText()).to.match(/eddie/);
    await shot(page, "health-case-quarantined", "wide");

    // The Viewer sees it, read-only.
    await viewer.reload();
    await viewer
      .getByRole("region", { name: "Quarantine" })
      .getByText("search index rebuild, INC-42")
      .waitFor();
    expect(await viewer.getByRole("button", { name: "Lift" }).count()).to.equal(0);
    await shot(viewer, "health-case-quarantined-viewer", "narrow");

    const pipeline = suite.project.pipeline;
    const run: RunBody = await pipeline.finished(
      (await pipeline.start({ tags: ["search"], environment: "target" })).id,
    );
    expect(run.status).to.equal("PASSED");
    expect(run.failedTests).to.equal(1);
    for (const width of ["wide", "narrow"] as const) {
      const runPage = await suite.signedIn(width, viewerId);
      await runPage.goto(run.url);
      await runPage.getByText("1 quarantined failure, not failing the run.").waitFor();
      await runPage.getByText("quarantined", { exact: true }).waitFor();
      // Its bar shows the failure apart from failures that failed the run: not one red bar.
      await runPage.getByRole("img", { name: "1 test: 1 failed, quarantined" }).waitFor();
      await shot(runPage, "health-run-quarantined", width);
    }
    // So does the project's list of runs, in its words.
    const runs = await suite.signedIn("wide", viewerId);
    await runs.goto(path("/runs"));
    await runs.getByText("0/1 passed, 1 quarantined failure").first().waitFor();

    await page.getByRole("button", { name: "Lift" }).click();
    await page.getByText("Search answers's quarantine lifted.").waitFor();
    expect(await page.getByRole("region", { name: "Quarantine" }).count()).to.equal(0);
  });

  it("lets an Admin change the health settings within their bounds, and not an Editor", async () => {
    const editor = await suite.signedIn("narrow", editorId);
    await editor.goto(path(""));
    await editor.getByRole("heading", { level: 1 }).waitFor();
    expect(await editor.getByRole("button", { name: "Change health settings" }).count()).to.equal(0);

    const page = await suite.signedIn("narrow", suite.project.ownerId);
    await page.goto(path(""));
    await page
      .getByText(/judged on the latest 30 results within 14 days, from 5 results; history kept 90 days/)
      .waitFor();
    await page.getByRole("button", { name: "Change health settings" }).click();
    const dialog = page.getByRole("dialog", { name: "Health settings" });
    await dialog.getByLabel("Window: latest results").fill("300");
    await dialog.getByText("From 5 to 200.", { exact: true }).waitFor();
    // Said once: the hint under the field gives way to the error.
    expect(await dialog.getByText("5 to 200.", { exact: true }).count()).to.equal(0);
    expect(await dialog.getByRole("button", { name: "Save" }).isDisabled()).to.equal(true);
    await shot(page, "health-settings", "narrow");
    await dialog.getByLabel("Window: latest results").fill("40");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByText(/judged on the latest 40 results within 14 days/).waitFor();
  });
});
