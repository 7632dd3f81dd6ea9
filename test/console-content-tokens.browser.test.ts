// Issue 42: content tokens in the console's "API & CI", in a real browser against the whole
// system. An Editor creates one (its trc_ secret shown once), it imports a document through the
// REST API and nothing else, revoking it is the next push's 401; a Viewer sees the list only. At
// 1280 and 390 px; screenshots go to .tmp/screenshots.
import { addMember, createCliContext } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeyKind } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { operator } from "@testrun/testing";
import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { horizontalOverflow, launchBrowser, openSignInLink, shot, viewports } from "./browser.js";
import { newProject, sharedTestSystem, type TestProject } from "./pipeline.js";

describe("console: content tokens in API & CI", function () {
  this.timeout(120_000);
  let system: System;
  let browser: Browser;
  let project: TestProject;
  let organizationId = "";
  const pages: Page[] = [];

  const member = async (email: string, role: Role) =>
    addMember(createCliContext(system.env), {
      organizationId,
      email,
      displayName: email.split("@")[0] ?? "",
      role,
    });
  const pageAs = async (width: keyof typeof viewports, memberId: string): Promise<Page> => {
    const page = await (await browser.newContext({ viewport: viewports[width] })).newPage();
    pages.push(page);
    await openSignInLink(page, system, memberId);
    return page;
  };
  const apiSettings = () => `${system.consoleUrl}/projects/${project.projectId}/settings/api`;
  const push = (secret: string, name: string) =>
    fetch(`${system.gatewayUrl}/v1/content/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({
        testCases: [
          { name, steps: [{ name: "home", http: { method: "GET", path: "/" }, expect: { status: 200 } }] },
        ],
      }),
    });

  before(async () => {
    system = await sharedTestSystem();
    browser = await launchBrowser();
    project = await newProject(system, "Token shop", { credits: 0 });
    const ctx = createCliContext(system.env);
    const { project: stored } = await ctx.catalog.getProject({
      actor: operator(),
      projectId: project.projectId,
    });
    organizationId = stored?.organizationId ?? "";
  });

  after(async () => {
    for (const page of pages) await page.context().close();
    await browser?.close();
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`an Editor creates a content token that imports and does nothing else, and revokes it (${viewports[width].width} px)`, async () => {
      const editor = await member(`token-editor-${width}@shop.example`, Role.EDITOR);
      const page = await pageAs(width, editor.id);
      await page.goto(apiSettings());
      await page.getByRole("heading", { name: "Content tokens" }).waitFor();
      await page.getByText("No content tokens yet.").waitFor();

      await page.getByRole("button", { name: "Create content token" }).click();
      const dialog = page.getByRole("dialog", { name: "Create content token" });
      await dialog.getByLabel("Name").fill(`Push specs ${width}`);
      await shot(page, "content-token-create", width);
      await dialog.getByRole("button", { name: "Create token" }).click();
      const secretField = page.getByRole("dialog").getByLabel("Secret token");
      await secretField.waitFor();
      const secret = await secretField.inputValue();
      expect(secret).to.match(/^trc_[A-Za-z0-9]{46}$/);
      await page
        .getByRole("dialog")
        .getByText("Copy this content token now. It cannot be shown again.")
        .waitFor();
      await shot(page, "content-token-secret", width);
      expect(await horizontalOverflow(page)).to.be.at.most(0);

      // It imports, as the Editor…
      const imported = await push(secret, `Pushed at ${width}`);
      expect(imported.status).to.equal(200);
      expect(
        ((await imported.json()) as { testCases: { outcome: string }[] }).testCases[0]?.outcome,
      ).to.equal("created");
      // …and reads nothing.
      const read = await fetch(`${system.gatewayUrl}/v1/project`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      expect(read.status).to.equal(401);

      await page.getByRole("dialog").getByRole("button", { name: "Done" }).click();
      expect(await page.content()).not.to.contain(secret.slice(12));
      const tokens = page.getByRole("region", { name: "Content tokens" });
      const row = tokens.getByRole("row", { name: new RegExp(`Push specs ${width}`) });
      await row.waitFor();
      expect(await row.textContent()).to.contain(secret.slice(0, 12));
      // The API keys' table does not list it.
      const keys = page.getByRole("region", { name: "Keys" });
      expect(await keys.getByRole("row", { name: new RegExp(`Push specs ${width}`) }).count()).to.equal(0);
      await shot(page, "content-tokens", width);

      await row.getByRole("button", { name: `Revoke Push specs ${width}` }).click();
      await page.getByRole("dialog").getByText("Pipelines pushing content with it get 401").waitFor();
      await page.getByRole("dialog").getByRole("button", { name: "Revoke token" }).click();
      await row.waitFor({ state: "detached" });
      expect((await push(secret, "After revoking")).status).to.equal(401);
    });
  }

  it("a Viewer sees the content tokens but cannot create or revoke one", async () => {
    const editor = await member("token-owner@shop.example", Role.EDITOR);
    const created = await createCliContext(system.env).keys.createKey({
      actor: { kind: { case: "memberId", value: editor.id } },
      projectId: project.projectId,
      name: "Nightly push",
      kind: KeyKind.CONTENT_TOKEN,
    });
    expect(created.secret).to.match(/^trc_/);
    const viewer = await member("token-viewer@shop.example", Role.VIEWER);
    const page = await pageAs("wide", viewer.id);
    await page.goto(apiSettings());
    await page
      .getByRole("region", { name: "Content tokens" })
      .getByRole("row", { name: /Nightly push/ })
      .waitFor();
    expect(await page.getByRole("button", { name: "Create content token" }).count()).to.equal(0);
    expect(await page.getByRole("button", { name: /revoke/i }).count()).to.equal(0);
    await shot(page, "content-tokens-viewer", "wide");
  });
});
