// What people noticed using the console as a new user (issue 24, item 8), in a real browser (Debian
// chromium through playwright-core) against the whole system, at 1280 and 390 px: the sign-in page
// after a session ended says so and what to ask for; a new key's secret shows whole; the only
// Owner is offered nothing the catalog would refuse (and a direct call is refused); the runs list
// says why a run was skipped and names a run of chosen cases after them; the top bar and the
// sections fit a phone. Every page visited is saved under .tmp/screenshots.
import { Code } from "@connectrpc/connect";
import { createCliContext, createEnvironment } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { horizontalOverflow, screenshot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { consoleClient, refusal, signIn } from "./console-client.js";
import { addCases, getCase, type TestProject } from "./pipeline.js";

describe("console, as a new user finds it", function () {
  this.timeout(90_000);
  const suite = consoleBrowserSuite("Acme ux", { credits: 20 });
  const { newPage, signedIn, member } = suite;
  let system: System;
  let acme: TestProject;
  let organizationId: string;
  before(() => {
    ({ system, project: acme, organizationId } = suite);
  });
  const px = (width: keyof typeof viewports) => viewports[width].width;
  const membersPage = () => `${system.consoleUrl}/orgs/${organizationId}/members`;

  for (const width of ["wide", "narrow"] as const) {
    it(`the sign-in page after a session ended says so, and what to ask an admin for (${px(width)} px)`, async () => {
      const page = await signedIn(width, acme.ownerId);
      await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/runs`);
      await page.getByRole("heading", { name: "Runs" }).waitFor();
      // The session ends elsewhere (another browser's "Sign out everywhere").
      const [cookie] = (await page.context().cookies()).filter((c) => c.name === "testrun_session");
      await consoleClient(system, `testrun_session=${cookie?.value}`).signOutEverywhere({});
      await page.reload();
      await page.waitForURL(/\/sign-in\?error=session_ended&next=/);
      await page.getByText(/^Your session ended: you signed out/).waitFor();
      await page.getByText(/Ask an admin of your organization for a one-time sign-in link/).waitFor();
      // Nothing asks for an id the person cannot know.
      expect(await page.locator("main, body").first().innerText()).not.to.match(/mem_|testrunctl/);
      expect(await horizontalOverflow(page)).to.be.at.most(0);
      await screenshot(page, `sign-in-session-ended-${px(width)}`);

      // A first visit, with no session at all, is not told that one ended.
      const fresh = await newPage(width);
      await fresh.goto(`${system.consoleUrl}/projects/${acme.projectId}/runs`);
      await fresh.waitForURL(/\/sign-in\?next=/);
      await fresh.getByText(/one-time sign-in link/).waitFor();
      expect(await fresh.getByText(/session ended/).count()).to.equal(0);
    });

    it(`a new key's secret shows whole, trk_ start included, and selectable (${px(width)} px)`, async () => {
      const page = await signedIn(width, acme.ownerId);
      await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/settings/api`);
      await page.getByRole("button", { name: "Create API key" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Name").fill(`Shown whole ${width}`);
      await dialog.getByRole("button", { name: /^Create/ }).click();
      const field = dialog.getByLabel("Secret key");
      await field.waitFor();
      const secret = await field.inputValue();
      expect(secret).to.match(/^trk_/);
      // Nothing of it is scrolled out of view, sideways or down.
      const hidden = await field.evaluate(
        (el) => [el.scrollWidth - el.clientWidth, el.scrollHeight - el.clientHeight, el.scrollLeft] as const,
      );
      expect(hidden).to.deep.equal([0, 0, 0]);
      // Focused, the whole secret is selected, ready to copy.
      const selected = await field.evaluate((el) => {
        const area = el as unknown as { selectionStart: number; selectionEnd: number; value: string };
        return area.value.slice(area.selectionStart, area.selectionEnd);
      });
      expect(selected).to.equal(secret);
      expect(await horizontalOverflow(page)).to.be.at.most(0);
      await screenshot(page, `key-secret-whole-${px(width)}`);
    });
  }

  it("the only Owner's row offers no role menu and no Remove; a second Owner makes leaving possible; the catalog refuses it anyway", async () => {
    const page = await signedIn("wide", acme.ownerId);
    await page.goto(membersPage());
    const own = page.getByRole("row", { name: /\(you\)/ });
    await own.getByText("The only Owner: make another member Owner").waitFor();
    expect(await own.getByRole("combobox").count()).to.equal(0);
    expect(await own.getByRole("button").count()).to.equal(0);
    await screenshot(page, "members-only-owner-1280");

    // A direct call is refused by the catalog: no leaving, no stepping down, as the only Owner.
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const leave = await refusal(owner.removeMember({ organizationId, memberId: acme.ownerId }));
    expect(leave.code).to.equal(Code.FailedPrecondition);
    expect(leave.rawMessage).to.contain("without an active OWNER");
    const stepDown = await refusal(
      owner.changeMemberRole({ organizationId, memberId: acme.ownerId, role: Role.ADMIN }),
    );
    expect(stepDown.code).to.equal(Code.FailedPrecondition);

    // With a second Owner, the row offers a role and leaving, each saying what happens.
    const second = await member("second.owner@acme.example", Role.ADMIN);
    await owner.changeMemberRole({ organizationId, memberId: second.id, role: Role.OWNER });
    await page.reload();
    await own.getByRole("button", { name: "Leave organization" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText(/You lose access to Acme ux and its projects at once/).waitFor();
    await screenshot(page, "members-leave-1280");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await own.getByLabel("Role of Owner").selectOption({ label: "Admin" });
    await dialog.getByText(/You become Admin at once/).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await owner.changeMemberRole({ organizationId, memberId: second.id, role: Role.ADMIN });
  });

  it("an Admin is offered no change to an Owner, and no Owner role to give (390 px)", async () => {
    const admin = await member("admin.ux@acme.example", Role.ADMIN);
    const editor = await member("editor.ux@acme.example", Role.EDITOR);
    const page = await signedIn("narrow", admin.id);
    await page.goto(membersPage());
    const ownerRow = page.getByRole("row", { name: /owner@acme-ux\.example/ });
    expect(await ownerRow.locator('td[data-label="Role"]').innerText()).to.equal("Owner");
    expect(await ownerRow.getByRole("combobox").count()).to.equal(0);
    expect(await ownerRow.getByRole("button").count()).to.equal(0);
    const editorRole = page.getByLabel(`Role of ${editor.displayName}`);
    expect(await editorRole.locator("option").allTextContents()).to.deep.equal(["Viewer", "Editor", "Admin"]);
    await page
      .getByRole("row", { name: /\(you\)/ })
      .getByRole("button", { name: "Leave organization" })
      .waitFor();
    expect(await horizontalOverflow(page)).to.be.at.most(0);
    await screenshot(page, "members-admin-390");
  });

  it("the runs list says why a run was skipped, and names a run of chosen cases after them (1280 and 390 px)", async () => {
    const switchedOff = await createEnvironment(createCliContext(system.env), {
      projectId: acme.projectId,
      name: "switched off",
      baseUrl: "http://127.0.0.1:9",
    });
    const cases = await addCases(
      system,
      acme.projectId,
      getCase("Login works", "ux", "/") + getCase("Cart works", "ux", "/"),
    );
    // Started in the console, which names it after the first case (the REST API's default stays
    // "2 test cases", as docs/rest-api.md decides).
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const { run: started } = await owner.startRun({
      projectId: acme.projectId,
      environmentId: switchedOff.id,
      selection: { selection: { case: "testCaseIds", value: { ids: cases.map((c) => c.id) } } },
    });
    expect(started?.name).to.equal("Login works + 1 more");
    expect((await acme.pipeline.finished(started?.id ?? "")).status).to.equal("SKIPPED");
    for (const width of ["wide", "narrow"] as const) {
      const page = await signedIn(width, acme.ownerId);
      await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/runs`);
      const row = page.getByRole("row", { name: /Login works \+ 1 more/ });
      await row.getByText("Skipped: environment unreachable").waitFor();
      await row.getByText("0/2 passed").waitFor();
      expect(await horizontalOverflow(page)).to.be.at.most(0);
      await screenshot(page, `runs-skipped-reason-${px(width)}`);
    }
  });

  it("at 390 px the top bar is one row with the whole email in the account menu, and the sections one row", async () => {
    const page = await signedIn("narrow", acme.ownerId);
    await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/credits`);
    await page.getByRole("heading", { name: "Credits" }).waitFor();
    const height = async (selector: string) => (await page.locator(selector).boundingBox())?.height ?? 0;
    const linkHeight =
      (await page.getByRole("link", { name: "Credits", exact: true }).boundingBox())?.height ?? 0;
    // One row each: no taller than one control (plus padding), not two or three.
    expect(await height(".topbar")).to.be.below(60);
    expect(await height(".sidenav")).to.be.below(linkHeight * 2);
    // The current section is in view even though the row scrolls sideways.
    const current = await page.getByRole("link", { name: "Credits", exact: true }).boundingBox();
    expect(current?.x, JSON.stringify(current)).to.be.at.least(0);
    expect((current?.x ?? 0) + (current?.width ?? 0), JSON.stringify(current)).to.be.at.most(390);
    expect(await horizontalOverflow(page)).to.be.at.most(0);
    await screenshot(page, "topbar-390");
    await page.getByLabel("Account: owner@acme-ux.example").click();
    const who = page.getByText("Signed in as");
    await who.getByText("owner@acme-ux.example").waitFor();
    const box = await who.boundingBox();
    expect((box?.x ?? -1) >= 0 && (box?.x ?? 0) + (box?.width ?? 0) <= 390).to.equal(true);
    await screenshot(page, "account-menu-open-390");
  });
});
