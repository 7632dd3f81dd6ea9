// Failures in the console (issue 41), through the whole system: a target whose order pages answer
// 500, runs started over REST with a real executor. The first run fails Order 12, Order 34 and
// Cart; the second (its base the first) fails Order 12, 34 and 56 and Search, and passes Cart. The
// Failures page lists the orders' group (5 times in 3 cases) above Search's, Cart's resolved group
// behind the filter; the group's page shows its cases, occurrences and the first run; the second
// run's page says "2 new failures against" the first with a Compare link, marks Order 56 and
// Search "new" and links each failure to its group. A third run, followed live, fails Cart again
// (Search, held, ends it): "1 new failure" and Cart's mark arrive without a reload, and Cart's group
// is reopened. Read by a
// Viewer; at 1280 and 390 px.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createCliContext, createEnvironment } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { shot } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { addCases, getCase, newProject, type RunBody } from "./pipeline.js";

/**
 * The target: `phase` 1 breaks orders 12 and 34 and the cart; 2 breaks every order and search; 3
 * breaks those and the cart again, and search answers only once `searchHeld` is released.
 */
function startTarget(phase: { now: 1 | 2 | 3; searchHeld?: Promise<void> }): Server {
  return createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://target").pathname;
    if (phase.now === 3 && path === "/search") await phase.searchHeld;
    const broken =
      path === "/api/orders/12" ||
      path === "/api/orders/34" ||
      (phase.now >= 2 && (path === "/api/orders/56" || path === "/search")) ||
      (phase.now !== 2 && path === "/cart");
    res.writeHead(broken ? (path === "/search" ? 503 : 500) : 200, { "content-type": "text/plain" });
    res.end(broken ? "down" : "ok");
  }).listen(0, "127.0.0.1");
}

const cases = [
  getCase("Order 12", "shop", "/api/orders/12"),
  getCase("Order 34", "shop", "/api/orders/34"),
  getCase("Order 56", "shop", "/api/orders/56"),
  getCase("Cart", "shop", "/cart"),
  getCase("Search", "shop", "/search"),
].join("");

describe("failure groups and new failures in the console", function () {
  this.timeout(180_000);
  const suite = consoleBrowserSuite("Acme failures", { credits: 40 });
  const phase: { now: 1 | 2 | 3; searchHeld?: Promise<void> } = { now: 1 };
  let target: Server;
  let viewerId: string;
  let first: RunBody;
  let second: RunBody;
  const path = (rest: string) => `${suite.system.consoleUrl}/projects/${suite.project.projectId}${rest}`;
  // Runs of the same name on the same environment: each is the next one's base.
  const startShop = () =>
    suite.project.pipeline.start({ name: "shop", tags: ["shop"], environment: "target" });
  const run = async () => suite.project.pipeline.finished((await startShop()).id);

  before(async () => {
    target = startTarget(phase);
    await once(target, "listening");
    const { port } = target.address() as AddressInfo;
    await createEnvironment(createCliContext(suite.system.env), {
      projectId: suite.project.projectId,
      name: "target",
      baseUrl: `http://127.0.0.1:${port}`,
    });
    await addCases(suite.system, suite.project.projectId, cases);
    viewerId = (await suite.member("vera@acme-failures.example", Role.VIEWER)).id;
    first = await run();
    phase.now = 2;
    second = await run();
    expect([first.failedTests, second.failedTests]).to.deep.equal([3, 4]);
  });
  after(() => target?.close());

  /** The Failures page's rows (the header row left out), top to bottom. */
  const groupRows = async (page: Page) => (await page.getByRole("row").allInnerTexts()).slice(1);

  for (const width of ["wide", "narrow"] as const) {
    it(`lists the open groups by impact with their counts and first run, the resolved one behind the filter (${width})`, async () => {
      const page = await suite.signedIn(width, viewerId);
      await page.goto(path(""));
      // "Failures" is in the project's navigation.
      await page
        .getByRole("navigation", { name: "Sections" })
        .getByRole("link", { name: "Failures" })
        .click();
      await page.getByRole("heading", { level: 1, name: "Failures" }).waitFor();
      await page.getByRole("row").filter({ hasText: "seen 5 times in 3 cases" }).waitFor();
      const rows = await groupRows(page);
      expect(rows).to.have.length(2);
      // The orders' group (3 cases) above Search's (1): by impact.
      expect(rows[0]).to.match(/Open/);
      expect(rows[0]).to.contain("seen 5 times in 3 cases");
      expect(rows[0]).to.match(/HTTP GET \/api\/orders\//);
      expect(rows[0]).to.contain("assertion: an expectation not met");
      expect(rows[0]).to.contain(first.id);
      expect(rows[0]).to.contain(second.id);
      expect(rows[1]).to.contain("seen once in 1 case");
      expect(rows[1]).to.contain("HTTP GET /search");
      expect(rows.join("\n")).not.to.contain("/cart");
      await shot(page, "failures-page", width);

      // Resolved: Cart's group, passing again in the second run.
      await page.getByLabel("State", { exact: true }).selectOption("resolved");
      await page.waitForURL(/state=resolved/);
      await page.getByRole("row").filter({ hasText: "HTTP GET /cart" }).waitFor();
      const resolved = await groupRows(page);
      expect(resolved).to.have.length(1);
      expect(resolved[0]).to.match(/Resolved/);
      expect(resolved[0]).to.contain("seen once in 1 case");
      await shot(page, "failures-page-resolved", width);
    });
  }

  it("says what the page is for when a project has no failure groups", async () => {
    const quiet = await newProject(suite.system, "Acme quiet", { credits: 0 });
    const page = await suite.signedIn("narrow", quiet.ownerId);
    await page.goto(`${suite.system.consoleUrl}/projects/${quiet.projectId}/failures`);
    const empty = page.getByText("No open failure groups");
    await empty.waitFor();
    await page.getByText(/a group stays here until its test cases pass again/).waitFor();
    expect(await page.getByRole("table").count()).to.equal(0);
    await shot(page, "failures-empty", "narrow");
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`shows a group's first run, its cases and its occurrences newest first (${width})`, async () => {
      const page = await suite.signedIn(width, viewerId);
      await page.goto(path("/failures"));
      // Opened from the list with the keyboard.
      const link = page
        .getByRole("row")
        .filter({ hasText: "seen 5 times in 3 cases" })
        .getByRole("link")
        .first();
      await link.focus();
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { level: 2, name: "Test cases (3)" }).waitFor();
      expect(await page.getByRole("heading", { level: 1 }).innerText()).to.match(/Open/);

      const region = page.getByRole("region", { name: "About this failure" });
      // The environment by its name, once the project's environments are read.
      await region.getByRole("link", { name: "target", exact: true }).waitFor();
      const about = await region.innerText();
      expect(about).to.contain("seen 5 times in 3 cases");
      expect(about).to.match(/First seen .* in run /);
      expect(about).to.contain(first.id);
      expect(about).to.match(/test Order (12|34) \(case version 1\) on target\./);

      const caseRows = page.getByRole("region", { name: /Test cases/ }).getByRole("row");
      expect(await caseRows.count()).to.equal(4);
      const order12 = await caseRows.filter({ hasText: "Order 12" }).innerText();
      expect(order12).to.match(/\b2\b/);
      expect(order12).to.contain("Still failing");
      expect(await caseRows.filter({ hasText: "Order 56" }).innerText()).to.match(/\b1\b/);
      expect(await caseRows.filter({ hasText: "Cart" }).count()).to.equal(0);

      const occurrences = page.getByRole("region", { name: /Occurrences/ }).getByRole("row");
      expect(await occurrences.count()).to.equal(6);
      const texts = (await occurrences.allInnerTexts()).slice(1);
      // Newest first: the second run's three, then the first run's two.
      expect(texts.map((t) => (t.includes(second.id) ? 2 : 1))).to.deep.equal([2, 2, 2, 1, 1]);
      expect(texts.every((t) => t.includes("500"))).to.equal(true);
      await shot(page, "failure-group", width);

      // A case's name opens its page; an occurrence's test opens the test page.
      await occurrences.nth(1).getByRole("link").nth(1).click();
      await page.getByRole("link", { name: /Run: shop/ }).waitFor();
    });
  }

  for (const width of ["wide", "narrow"] as const) {
    it(`marks the new failures on a run's page, links each failure to its group and to the comparison (${width})`, async () => {
      const page = await suite.signedIn(width, viewerId);
      await page.goto(second.url);
      const notice = page.getByRole("status").filter({ hasText: "new failures against" });
      await notice.waitFor();
      expect(await notice.innerText()).to.contain(`2 new failures against ${first.id}.`);
      const compare = notice.getByRole("link", { name: "Compare" });
      expect(await compare.getAttribute("href")).to.equal(
        `/projects/${suite.project.projectId}/runs/${second.id}/compare`,
      );
      const row = (name: string) => page.getByRole("row").filter({ hasText: name });
      const marked = async (name: string) =>
        (await row(name).getByText("new", { exact: true }).count()) === 1;
      expect(await marked("Order 56")).to.equal(true);
      expect(await marked("Search")).to.equal(true);
      expect(await marked("Order 12")).to.equal(false);
      expect(await marked("Cart")).to.equal(false);
      const groupLink = row("Order 12").getByRole("link", { name: /^seen 5 times in 3 cases since run / });
      expect(await groupLink.innerText()).to.contain(first.id);
      expect(
        await row("Search")
          .getByRole("link", { name: /^seen once in 1 case since run / })
          .count(),
      ).to.equal(1);
      await shot(page, "failures-run", width);

      // The first run has no base: no such notice.
      await page.goto(first.url);
      await page.getByRole("heading", { level: 2, name: "Tests" }).waitFor();
      await page.getByRole("row").filter({ hasText: "Order 12" }).waitFor();
      expect(await page.getByText(/new failures against/).count()).to.equal(0);

      // The group link opens the group's page.
      await page.goto(second.url);
      await groupLink.click();
      await page.getByRole("heading", { level: 2, name: "Test cases (3)" }).waitFor();
    });
  }

  it("shows a failed test's group and its new mark on the test's page", async () => {
    const page = await suite.signedIn("wide", viewerId);
    const order56 = second.tests.find((t) => t.name === "Order 56");
    await page.goto(order56?.url ?? "");
    const heading = page.getByRole("heading", { level: 1 });
    await heading.getByText("new", { exact: true }).waitFor();
    await page.getByRole("link", { name: `seen 5 times in 3 cases since run ${first.id}` }).waitFor();
    await shot(page, "failures-test", "wide");
  });

  it("marks a new failure on a run's page followed live as the run finishes", async () => {
    let release = () => {};
    phase.now = 3;
    phase.searchHeld = new Promise<void>((resolve) => {
      release = resolve;
    });
    const third = await startShop();
    const page = await suite.signedIn("wide", viewerId);
    await page.goto(third.url);
    // Cart has failed; Search, the last test, is held: the change that finishes the run is its
    // alone, while the run's end marks Cart as new (the page reads the whole run for it).
    await page.getByRole("row").filter({ hasText: "Cart" }).getByText("Failed", { exact: true }).waitFor();
    await page.getByText("Live: this page updates as the tests progress").waitFor();
    release();
    // Cart, passing in the second run, fails again: new against it, with no reload.
    const notice = page.getByRole("status").filter({ hasText: "new failure against" });
    await notice.waitFor();
    expect(await notice.innerText()).to.contain(`1 new failure against ${second.id}.`);
    const cart = page.getByRole("row").filter({ hasText: "Cart" });
    await cart.getByText("new", { exact: true }).waitFor();
    expect(await page.getByRole("row").getByText("new", { exact: true }).count()).to.equal(1);
    await shot(page, "failures-run-live", "wide");

    // Its group, resolved after the second run, is open again.
    await page.goto(path("/failures"));
    const reopened = page.getByRole("row").filter({ hasText: "HTTP GET /cart" });
    await reopened.waitFor();
    expect(await reopened.innerText()).to.match(/Reopened/);
    expect(await reopened.innerText()).to.contain("seen 2 times in 1 case");
  });
});
