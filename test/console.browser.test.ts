// The console in a real browser (Debian chromium through playwright-core) against the whole system:
// sign-in by link and by OpenID Connect (a real provider, oidc-provider), API & CI for an Editor and
// a Viewer, the members page, deep links through sign-in, sign-out; at 1280 and 390 px wide.
// Every page visited is saved under .tmp/screenshots.
import { createHash } from "node:crypto";
import { addMember, createCliContext, removeMember } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { findFreePort } from "@testrun/testing";
import { expect } from "chai";
import pg from "pg";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { horizontalOverflow, launchBrowser, openSignInLink, screenshot, viewports } from "./browser.js";
import { consoleClient, signIn, signInLinkOf } from "./console-client.js";
import { startOidcProvider, type TestOidcProvider } from "./oidc-provider.js";
import { newProject, startTestSystem, type TestProject } from "./pipeline.js";

describe("console in a browser", function () {
  this.timeout(90_000);
  let system: System;
  let provider: TestOidcProvider;
  let browser: Browser;
  let acme: TestProject;
  let organizationId: string;
  let db: pg.Client;
  const contexts: BrowserContext[] = [];
  /** Credentials the browser saw (key secrets, link tokens): none may reach a log line. */
  const secrets: string[] = [];

  /** A fresh browser profile (no cookies) at one of the two widths. */
  const newPage = async (width: keyof typeof viewports = "wide"): Promise<Page> => {
    const context = await browser.newContext({ viewport: viewports[width] });
    contexts.push(context);
    return context.newPage();
  };
  const member = (email: string, role: Role) =>
    addMember(createCliContext(system.env), {
      organizationId,
      email,
      displayName: email.split("@")[0] ?? "",
      role,
    });
  const openLink = async (page: Page, memberId: string) => {
    secrets.push(await openSignInLink(page, system, memberId));
  };
  /** Emails the provider gives other than the login (an email changed at the provider). */
  const providerEmails: Record<string, string> = {};
  const oidcSignIn = async (page: Page, login: string) => {
    await page.goto(`${system.consoleUrl}/sign-in`);
    await page.getByRole("link", { name: /sign in with/i }).click();
    await page.locator("input[name=login]").fill(login);
    await page.locator("input[name=password]").fill("any");
    await page.locator("button[type=submit]").click();
    await page.locator("button[type=submit]").click();
    await page.waitForURL(
      (url) => url.pathname !== "/auth/oidc/callback" && url.port === new URL(system.consoleUrl).port,
    );
  };
  const sessionOf = async (page: Page) => {
    const cookie = (await page.context().cookies()).find((c) => c.name === "testrun_session");
    return consoleClient(system, `testrun_session=${cookie?.value}`).getSession({});
  };
  const apiSettings = () => `${system.consoleUrl}/projects/${acme.projectId}/settings/api`;
  const v1Project = (secret: string) =>
    fetch(`${system.gatewayUrl}/v1/project`, { headers: { authorization: `Bearer ${secret}` } });

  before(async () => {
    const consolePort = await findFreePort();
    provider = await startOidcProvider({
      redirectUri: `http://localhost:${consolePort}/auth/oidc/callback`,
      unverified: ["unverified@acme.example"],
      emails: providerEmails,
    });
    system = await startTestSystem({
      consoleHttpPort: consolePort,
      serviceEnv: {
        console: {
          OIDC_ISSUER_URL: provider.issuerUrl,
          OIDC_CLIENT_ID: provider.clientId,
          OIDC_CLIENT_SECRET: provider.clientSecret,
        },
      },
    });
    browser = await launchBrowser();
    acme = await newProject(system, "Acme web", { credits: 0 });
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    organizationId = (await owner.getProject({ projectId: acme.projectId })).organization?.id ?? "";
    db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
  });

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });

  after(async () => {
    await browser?.close();
    await db?.end();
    await system?.stop();
    await provider?.stop();
  });

  it("a sign-in link opens the project, and the same link is refused the second time", async () => {
    const { url } = await signInLinkOf(system, acme.ownerId);
    const page = await newPage();
    await page.goto(url);
    // Nothing is used on load: the page says whom the link signs in, and where, and waits.
    await page.getByRole("heading", { name: "Sign in as Owner?" }).waitFor();
    await page.getByText("in the organization Acme web").waitFor();
    expect(page.url()).to.equal(`${system.consoleUrl}/sign-in/link`);
    expect((await page.context().cookies()).map((c) => c.name)).not.to.include("testrun_session");
    await screenshot(page, "sign-in-link-confirm-1280");
    await page.getByRole("button", { name: "Sign in as Owner" }).click();
    await page.getByRole("heading", { name: "Acme web" }).waitFor();
    expect(page.url()).to.equal(`${system.consoleUrl}/projects/${acme.projectId}`);
    await screenshot(page, "project-overview-1280");

    const again = await newPage();
    await again.goto(url);
    await again.getByText("This sign-in link is not valid").waitFor();
    await screenshot(again, "sign-in-link-used-1280");
  });

  it("a visitor not signed in yet opens a sign-in link and the app without a console error or a failed request", async () => {
    const page = await newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(String(error)));
    // A request the test's own next navigation cancels (the first page's favicon, say) is
    // ERR_ABORTED: not a failure a visitor would see.
    page.on("requestfailed", (request) => {
      const reason = request.failure()?.errorText ?? "";
      if (reason !== "net::ERR_ABORTED")
        problems.push(`${request.method()} ${request.url()} failed: ${reason}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    const { url, token } = await signInLinkOf(system, acme.ownerId);
    secrets.push(token);
    // The page asks who is signed in: nobody, a normal answer.
    const asked = page.waitForResponse((response) => response.url().endsWith("/GetSession"));
    await page.goto(url);
    await page.getByRole("heading", { name: "Sign in as Owner?" }).waitFor();
    const answer = await asked;
    // In Connect's JSON a false signedIn (like every default) is left out.
    expect([answer.status(), await answer.json()]).to.deep.equal([200, {}]);
    expect(await page.getByText("This browser is signed in as").count()).to.equal(0);
    // A deep link into the app, unsigned: the sign-in page, with the way back.
    await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/runs`);
    await page.waitForURL(/\/sign-in\?next=%2Fprojects%2F/);
    await page.getByRole("heading", { name: "Sign in", exact: true }).waitFor();
    expect(problems).to.deep.equal([]);
  });

  it("a sign-in link for someone else warns a browser already signed in, and asks first (390 px)", async () => {
    const page = await newPage("narrow");
    await openLink(page, acme.ownerId);
    const other = await member("someone.else@acme.example", Role.VIEWER);
    const link = await signInLinkOf(system, other.id);
    secrets.push(link.token);
    await page.goto(link.url);
    await page.getByText("This browser is signed in as owner@acme-web.example").waitFor();
    expect(await horizontalOverflow(page)).to.equal(0);
    await screenshot(page, "sign-in-link-other-person-390");
    // Cancel keeps the session as it was, and the link unused.
    await page.getByRole("link", { name: "Cancel" }).click();
    await page.getByRole("heading", { name: "Acme web" }).first().waitFor();
    expect((await sessionOf(page)).email).to.equal("owner@acme-web.example");
  });

  it("a sign-in link for the same email in another organization warns too: the session is someone else's", async () => {
    const page = await newPage();
    await openLink(page, acme.ownerId);
    const elsewhere = await newProject(system, "Acme elsewhere", { credits: 0 });
    const elsewhereId =
      (
        await consoleClient(system, await signIn(system, elsewhere.ownerId)).getProject({
          projectId: elsewhere.projectId,
        })
      ).organization?.id ?? "";
    const sameEmail = await addMember(createCliContext(system.env), {
      organizationId: elsewhereId,
      email: "owner@acme-web.example",
      displayName: "Owner elsewhere",
      role: Role.VIEWER,
    });
    const link = await signInLinkOf(system, sameEmail.id);
    secrets.push(link.token);
    await page.goto(link.url);
    await page.getByText("in the organization Acme elsewhere, and only there").waitFor();
    await page
      .getByText("This browser is signed in as owner@acme-web.example in the organization Acme web")
      .waitFor();
    await screenshot(page, "sign-in-link-other-organization-1280");
  });

  it("an expired sign-in link is refused", async () => {
    const { url, token } = await signInLinkOf(system, acme.ownerId);
    const digest = createHash("sha256").update(token).digest("hex");
    await db.query(
      "update console.sign_in_links set expires_at = now() - interval '1 second' where digest = $1",
      [digest],
    );
    const page = await newPage("narrow");
    await page.goto(url);
    await page.getByText("This sign-in link is not valid").waitFor();
    await screenshot(page, "sign-in-link-expired-390");
  });

  for (const width of ["wide", "narrow"] as const) {
    it(`an Editor creates a key in API & CI that works on /v1, and revoking it is the next request's 401 (${viewports[width].width} px)`, async () => {
      const editor = await member(`editor-${width}@acme.example`, Role.EDITOR);
      const page = await newPage(width);
      await openLink(page, editor.id);
      await page.goto(apiSettings());
      await page.getByRole("row", { name: /pipeline/ }).waitFor();
      await screenshot(page, `api-keys-${viewports[width].width}`);

      await page.getByRole("button", { name: "Create API key" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Name").fill(`CI ${width}`);
      await screenshot(page, `create-key-dialog-${viewports[width].width}`);
      await dialog.getByRole("button", { name: /^Create/ }).click();
      const secretField = dialog.getByLabel("Secret key");
      await secretField.waitFor();
      const secret = await secretField.inputValue();
      expect(secret).to.match(/^trk_[A-Za-z0-9]{46}$/);
      secrets.push(secret);
      await dialog.getByText("cannot be shown again").waitFor();
      await screenshot(page, `key-secret-shown-${viewports[width].width}`);
      expect(await horizontalOverflow(page)).to.be.at.most(0);

      expect((await v1Project(secret)).status).to.equal(200);

      await dialog.getByRole("button", { name: /close|done/i }).click();
      // Gone for good once the dialog is closed: nowhere on the page.
      expect(await page.content()).not.to.contain(secret);
      const row = page.getByRole("row", { name: new RegExp(`CI ${width}`) });
      await row.getByRole("button", { name: /revoke/i }).click();
      await page
        .getByRole("dialog")
        .getByRole("button", { name: /revoke/i })
        .click();
      await row.waitFor({ state: "detached" });
      expect((await v1Project(secret)).status).to.equal(401);
      await screenshot(page, `api-keys-after-revoke-${viewports[width].width}`);
    });
  }

  it("a Viewer sees the key list but no create or revoke", async () => {
    const viewer = await member("viewer@acme.example", Role.VIEWER);
    const page = await newPage();
    await openLink(page, viewer.id);
    await page.goto(apiSettings());
    await page.getByRole("row", { name: /pipeline/ }).waitFor();
    expect(await page.getByRole("button", { name: "Create API key" }).count()).to.equal(0);
    expect(await page.getByRole("button", { name: /revoke/i }).count()).to.equal(0);
    await screenshot(page, "api-keys-viewer-1280");
  });

  it("an Owner sees the members page with the warning about keys, and adds a member", async () => {
    const page = await newPage();
    await openLink(page, acme.ownerId);
    await page.goto(`${system.consoleUrl}/orgs/${organizationId}/members`);
    await page.getByRole("button", { name: "Add member" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Email").fill("new.person@acme.example");
    await dialog.getByLabel("Name").fill("New Person");
    await dialog.getByText(/kills the API keys they created/).waitFor();
    await screenshot(page, "members-add-1280");
    await dialog.getByRole("button", { name: /^Add/ }).click();
    await page.getByRole("cell", { name: "new.person@acme.example" }).waitFor();
    await screenshot(page, "members-1280");
  });

  it("OpenID Connect: a deep link goes through the provider and back to the same page", async () => {
    await member("sso.user@acme.example", Role.EDITOR);
    const page = await newPage();
    await page.goto(apiSettings());
    await page.waitForURL(/\/sign-in/);
    await screenshot(page, "sign-in-1280");
    await page.getByRole("link", { name: /sign in with/i }).click();
    // The provider's own (development) login and consent pages.
    await page.locator("input[name=login]").fill("sso.user@acme.example");
    await page.locator("input[name=password]").fill("any");
    await page.locator("button[type=submit]").click();
    await page.locator("button[type=submit]").click();
    await page.waitForURL(apiSettings());
    await page.getByRole("heading", { name: "API & CI" }).waitFor();
    await screenshot(page, "sso-returned-1280");
  });

  it("OpenID Connect: an email no organization has gets the not-a-member page, and no session", async () => {
    const page = await newPage("narrow");
    await page.goto(`${system.consoleUrl}/sign-in`);
    await page.getByRole("link", { name: /sign in with/i }).click();
    await page.locator("input[name=login]").fill("stranger@nowhere.example");
    await page.locator("input[name=password]").fill("any");
    await page.locator("button[type=submit]").click();
    await page.locator("button[type=submit]").click();
    await page.waitForURL(/error=not_a_member/);
    await page.getByText(/No Testrun organization has a member with your email/).waitFor();
    await screenshot(page, "not-a-member-390");
    expect((await page.context().cookies()).map((c) => c.name)).not.to.include("testrun_session");
  });

  it("OpenID Connect: an email the provider has not verified signs nobody in", async () => {
    await member("unverified@acme.example", Role.EDITOR);
    const page = await newPage();
    await page.goto(`${system.consoleUrl}/sign-in`);
    await page.getByRole("link", { name: /sign in with/i }).click();
    await page.locator("input[name=login]").fill("unverified@acme.example");
    await page.locator("input[name=password]").fill("any");
    await page.locator("button[type=submit]").click();
    await page.locator("button[type=submit]").click();
    await page.waitForURL(/error=oidc_failed/);
    await page.getByText(/did not complete/).waitFor();
    expect((await page.context().cookies()).map((c) => c.name)).not.to.include("testrun_session");
  });

  it("signing out ends the session: the next page asks to sign in again", async () => {
    const page = await newPage("narrow");
    await openLink(page, acme.ownerId);
    const [session] = (await page.context().cookies()).filter((c) => c.name === "testrun_session");
    await page.getByLabel("Account: owner@acme-web.example").click();
    await screenshot(page, "account-menu-390");
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(/\/sign-in/);
    await page.getByText("You are signed out.").waitFor();
    await screenshot(page, "signed-out-390");
    await page.goto(apiSettings());
    await page.waitForURL(/\/sign-in\?next=/);
    // The old session id is dead on the server too, not just forgotten by this browser.
    const replayed = consoleClient(system, `testrun_session=${session?.value}`);
    expect(await replayed.getSession({})).to.include({ signedIn: false, sessionEnded: true });
  });

  it("Sign out everywhere, from the account menu, ends the other browser's session too", async () => {
    const laptop = await newPage();
    await openLink(laptop, acme.ownerId);
    const phone = await newPage("narrow");
    await openLink(phone, acme.ownerId);
    await laptop.getByLabel("Account: owner@acme-web.example").click();
    await screenshot(laptop, "account-menu-1280");
    await laptop.getByRole("button", { name: "Sign out everywhere" }).click();
    await laptop.getByText("You are signed out in every browser").waitFor();
    await screenshot(laptop, "signed-out-everywhere-1280");
    await phone.reload();
    // The phone still holds its cookie: the sign-in page says its session ended.
    await phone.waitForURL(/\/sign-in\?error=session_ended&next=/);
  });

  it("OpenID Connect: starting a sign-in stores nothing on the server, and a long return path returns to /", async () => {
    const rows = async () => {
      const { rows: tables } = await db.query(
        "select table_name from information_schema.tables where table_schema = 'console' and table_type = 'BASE TABLE'",
      );
      let total = 0;
      for (const { table_name } of tables)
        total += (await db.query(`select count(*)::int as n from console."${table_name}"`)).rows[0].n;
      return total;
    };
    const before = await rows();
    const starts = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${system.consoleUrl}/auth/oidc/start?next=/${"x".repeat(1900)}`, { redirect: "manual" }),
      ),
    );
    for (const start of starts) {
      expect(start.status).to.equal(302);
      const [cookie] = start.headers.getSetCookie();
      expect(cookie).to.match(
        /^testrun_oidc_state=[A-Za-z0-9_-]+; Max-Age=600; Path=\/; HttpOnly; SameSite=Lax$/,
      );
      expect(cookie?.length).to.be.below(1200);
    }
    expect(await rows()).to.equal(before);
    // An attempt cookie from elsewhere (not sealed by this console) finishes nothing.
    const forged = await fetch(`${system.consoleUrl}/auth/oidc/callback?state=abc&code=x`, {
      headers: { cookie: "testrun_oidc_state=abc" },
      redirect: "manual",
    });
    expect(forged.headers.get("location")).to.equal("/sign-in?error=oidc_failed");
  });

  it("OpenID Connect: a member is bound to the first subject; another subject with its email takes nothing, and a changed email keeps the person's member", async () => {
    const kate = await member("kate.oidc@acme.example", Role.EDITOR);
    const bob = await member("bob.oidc@acme.example", Role.EDITOR);
    // Bob and Kate sign in once each: each member is bound to its own subject.
    const first = await newPage();
    await oidcSignIn(first, "bob.oidc@acme.example");
    expect((await sessionOf(first)).memberships.map((m) => m.member?.id)).to.deep.equal([bob.id]);
    const second = await newPage();
    await oidcSignIn(second, "kate.oidc@acme.example");
    expect((await sessionOf(second)).memberships.map((m) => m.member?.id)).to.deep.equal([kate.id]);

    // Another account at the provider showing Kate's (verified) email is not Kate.
    providerEmails.impostor = "kate.oidc@acme.example";
    const impostor = await newPage();
    await oidcSignIn(impostor, "impostor");
    expect(impostor.url()).to.match(/error=not_a_member/);

    // Kate's email changes to Bob's at the provider: she is still Kate, and never Bob.
    providerEmails["kate.oidc@acme.example"] = "bob.oidc@acme.example";
    const changed = await newPage();
    await oidcSignIn(changed, "kate.oidc@acme.example");
    expect((await sessionOf(changed)).memberships.map((m) => m.member?.id)).to.deep.equal([kate.id]);
  });

  it("OpenID Connect: a provider email that only normalises to a member's (KELVIN SIGN) binds nothing; one differing in ASCII case binds, and the session shows the stored email", async () => {
    const kate = await member("kelvin.kate@acme.example", Role.OWNER);
    providerEmails["kelvin-account"] = "\u212Aelvin.kate@acme.example";
    const lookalike = await newPage();
    await oidcSignIn(lookalike, "kelvin-account");
    expect(lookalike.url()).to.match(/error=not_a_member/);
    expect((await lookalike.context().cookies()).map((c) => c.name)).not.to.include("testrun_session");

    providerEmails["kate-upper"] = "Kelvin.KATE@ACME.example";
    const upper = await newPage();
    await oidcSignIn(upper, "kate-upper");
    const session = await sessionOf(upper);
    expect(session.memberships.map((m) => m.member?.id)).to.deep.equal([kate.id]);
    expect(session.email).to.equal("kelvin.kate@acme.example");
  });

  it("OpenID Connect: a repeated ?next= starts the sign-in (returning to /), logging no error", async () => {
    const answer = await fetch(`${system.consoleUrl}/auth/oidc/start?next=/a&next=/b`, {
      redirect: "manual",
    });
    expect(answer.status).to.equal(302);
    expect(answer.headers.get("location")).to.match(new RegExp(`^${provider.issuerUrl}/`));
    const errors = (system.processes.get("console")?.output() ?? []).filter((line) =>
      line.includes("could not start"),
    );
    expect(errors).to.deep.equal([]);
  });

  it("OpenID Connect: a removed member's binding ends, so whoever is added back is not the old subject's", async () => {
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    // Removed in the console, then added again (the same member id) for someone else.
    const first = await member("seat.one@acme.example", Role.EDITOR);
    await oidcSignIn(await newPage(), "seat.one@acme.example");
    providerEmails["seat.one@acme.example"] = "moved.on@elsewhere.example";
    await owner.removeMember({ organizationId, memberId: first.id });
    expect((await member("seat.one@acme.example", Role.EDITOR)).id).to.equal(first.id);
    const formerByConsole = await newPage();
    await oidcSignIn(formerByConsole, "seat.one@acme.example");
    expect(formerByConsole.url()).to.match(/error=not_a_member/);

    // Removed by testrunctl (which the console does not see): the next sign-in finds the member
    // removed and drops the binding, so adding it back later gives the old subject nothing.
    const second = await member("seat.two@acme.example", Role.EDITOR);
    await oidcSignIn(await newPage(), "seat.two@acme.example");
    providerEmails["seat.two@acme.example"] = "moved.too@elsewhere.example";
    await removeMember(createCliContext(system.env), { memberId: second.id });
    const whileRemoved = await newPage();
    await oidcSignIn(whileRemoved, "seat.two@acme.example");
    expect(whileRemoved.url()).to.match(/error=not_a_member/);
    expect((await member("seat.two@acme.example", Role.EDITOR)).id).to.equal(second.id);
    const formerByCli = await newPage();
    await oidcSignIn(formerByCli, "seat.two@acme.example");
    expect(formerByCli.url()).to.match(/error=not_a_member/);
  });

  it("an unknown page, and another organization's project, show not found", async () => {
    const page = await newPage();
    await openLink(page, acme.ownerId);
    const other = await newProject(system, "Someone else", { credits: 0 });
    await page.goto(`${system.consoleUrl}/projects/${other.projectId}/settings/api`);
    await page
      .getByText(/not found/i)
      .first()
      .waitFor();
    await screenshot(page, "project-not-found-1280");
    await page.goto(`${system.consoleUrl}/no/such/page`);
    await page
      .getByText(/not found/i)
      .first()
      .waitFor();
  });

  it("no key secret or link token the browser saw is in any log line", () => {
    expect(secrets.length).to.be.greaterThan(5);
    for (const [name, child] of system.processes) {
      const output = child.output().join("\n");
      for (const secret of secrets)
        expect(output.includes(secret), `${name} logged a secret`).to.equal(false);
    }
  });
});
