// Issue 35, item 8: a new project can run something. On a system whose catalog grants every new
// project 25 credits (NEW_PROJECT_CREDITS) and whose console names who grants more
// (OPERATOR_CONTACT), in a real browser: a project an owner makes in the console, and one made with
// testrunctl, start with the 25 credits, granted once; a project whose credits are spent says on
// its overview and its Credits page that no run can start, who grants credits and the command to
// ask them for (1280 and 390 px), and the REST API's 402 says who grants them too. Screenshots go
// to .tmp/screenshots.
import { createCliContext, createOrganization } from "@testrun/cli";
import { LedgerEntryKind } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { newId } from "@testrun/kit";
import { operator } from "@testrun/testing";
import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { launchBrowser, openSignInLink, shot, viewports } from "./browser.js";
import { addCases, getCase, newProject, startTestSystem } from "./pipeline.js";

const contact = "the platform team, #testrun on Slack";

describe("console: a new project's credits, and what a balance of 0 says", function () {
  this.timeout(120_000);
  let system: System;
  let browser: Browser;
  before(async () => {
    // A system of its own: the shared one grants new projects nothing (other suites count on it).
    system = await startTestSystem({
      serviceEnv: { catalog: { NEW_PROJECT_CREDITS: "25" }, console: { OPERATOR_CONTACT: contact } },
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  const ctx = () => createCliContext(system.env);
  const ledgerOf = async (projectId: string) =>
    (await ctx().billing.listLedger({ actor: operator(), projectId })).entries;
  const pageAs = async (width: keyof typeof viewports, memberId: string): Promise<Page> => {
    const page = await (await browser.newContext({ viewport: viewports[width] })).newPage();
    await openSignInLink(page, system, memberId);
    return page;
  };

  it("a project made in the console, or with testrunctl, starts with NEW_PROJECT_CREDITS, granted once", async () => {
    const { organization, owner } = await createOrganization(ctx(), {
      name: "Credits Co",
      ownerEmail: "olga@credits.example",
      ownerName: "Olga",
    });
    const page = await pageAs("wide", owner?.id ?? "");
    await page.goto(`${system.consoleUrl}/orgs/${organization?.id}`);
    await page.getByRole("button", { name: "New project" }).click();
    const dialog = page.getByRole("dialog", { name: "New project" });
    await dialog.getByLabel("Name", { exact: true }).fill("Shop");
    await dialog.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { name: "Shop", level: 1 }).waitFor();
    const projectId = new URL(page.url()).pathname.split("/")[2] ?? "";
    const balance = page.getByRole("complementary", { name: "Credit balance" });
    await balance.locator(".balance-value", { hasText: /^25$/ }).waitFor();
    expect(await page.getByText("No credits left").count()).to.equal(0);
    await shot(page, "credits-new-project-overview", "wide");

    await page.getByRole("link", { name: "Ledger" }).click();
    await page
      .getByRole("row", { name: /granted to every new project \(NEW_PROJECT_CREDITS\)/ })
      .getByText("+25")
      .waitFor();
    await shot(page, "credits-new-project-ledger", "wide");
    const [grant, ...more] = await ledgerOf(projectId);
    expect(more).to.deep.equal([]);
    expect(grant).to.include({ kind: LedgerEntryKind.GRANT, amount: 25n, idempotencyKey: "new-project" });

    // testrunctl's `project create` (through the CLI's code, as pipeline.ts's newProject makes one).
    const made = await newProject(system, "Made by testrunctl", { credits: 0 });
    expect((await ledgerOf(made.projectId)).map((entry) => entry.amount)).to.deep.equal([25n]);
  });

  it("a project whose credits are spent: REST's 402 says who grants more", async () => {
    const spent = await newProject(system, "Spent over REST", { credits: 0 });
    await addCases(system, spent.projectId, getCase("home page", "home", "/"));
    await ctx().billing.chargeRun({ projectId: spent.projectId, runId: newId("run"), amount: 25n });
    const refused = await spent.pipeline.call("POST", "/v1/runs", { tags: ["home"] });
    expect(refused.status).to.equal(402);
    expect(refused.body).to.include({ code: "insufficient_credits", required: 1, available: 0 });
    expect(refused.body.error).to.contain("an operator of this Testrun installation grants credits");
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`at 0, the overview and the Credits page say that no run can start, who grants credits and how (${viewports[width].width} px)`, async () => {
      const spent = await newProject(system, `Spent ${width}`, { credits: 0 });
      // Its 25 credits spent, as by a run of 25 tests.
      await ctx().billing.chargeRun({ projectId: spent.projectId, runId: newId("run"), amount: 25n });
      const page = await pageAs(width, spent.ownerId);
      const command = `testrunctl credits grant <credits> --project ${spent.projectId} --reason "<why>"`;
      for (const [path, name] of [
        ["", "credits-none-overview"],
        ["/credits", "credits-none-ledger"],
      ] as const) {
        await page.goto(`${system.consoleUrl}/projects/${spent.projectId}${path}`);
        const notice = page.getByRole("status").filter({ hasText: "No credits left: runs cannot start." });
        await notice.waitFor();
        const text = await notice.innerText();
        expect(text).to.contain(
          `Credits are granted by an operator of this Testrun installation (${contact})`,
        );
        expect(text).to.contain("not by the organization's owners or admins");
        expect(await notice.getByRole("figure", { name: "Grant credits" }).innerText()).to.contain(command);
        await shot(page, name, width);
      }
    });
  }
});
