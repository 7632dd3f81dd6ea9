// Schedules, webhooks and status badges in the console, in a real browser against the whole system
// (the automation service among it): a schedule created with its next three times shown as the
// cron expression is typed, a field error at the cron field; a webhook whose signing secret shows
// once (a host that does not resolve refused at its field first); a delivery to a local receiver
// after a run finishes, its signature checked, redelivered with the same webhook-id; a plan's badge created, shown, read as SVG
// by anyone, and revoked. Viewers read, Editors change; Viewers see a webhook's URL by its origin
// only. A removed Editor's webhook paused with the reason and sent nothing, resumed by the Owner,
// who it then acts for. At 1280 and 390 px; every page saved under .tmp/screenshots.
import { createCliContext, createTestPlan, removeMember } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { eventually } from "@testrun/testing";
import { expect } from "chai";
import { startWebhookReceiver, type WebhookReceiver } from "../scripts/webhook-receiver.js";
import { errorAt, expectNoErrorAt, shot } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { consoleClient, signIn } from "./console-client.js";
import { addCases, getCase } from "./pipeline.js";

describe("console automation in a browser", function () {
  this.timeout(120_000);
  const suite = consoleBrowserSuite("Acme automation", { credits: 50 });
  const viewerEmail = "vera@acme-automation.example";
  let planId: string;
  let viewerId: string;
  // A receiver the system's automation service may reach (loopback over http, as scripts/system.ts allows).
  let receiver: WebhookReceiver;
  const linkTo = (url: string) => new RegExp(url.replace(/[.]/g, "\\."));
  const receiverLink = () => linkTo(receiver.url);
  const path = (rest: string) => `${suite.system.consoleUrl}/projects/${suite.project.projectId}${rest}`;

  before(async () => {
    const { system, project } = suite;
    const [created] = await addCases(system, project.projectId, getCase("Health", "smoke", "/health"));
    planId = (
      await createTestPlan(createCliContext(system.env), {
        projectId: project.projectId,
        name: "Smoke",
        testCases: [created?.id ?? ""],
      })
    ).id;
    viewerId = (await suite.member(viewerEmail, Role.VIEWER)).id;
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
  });

  it("creates a schedule, showing its next three times as it is typed and a bad expression at its field", async () => {
    const page = await suite.signedIn("wide", suite.project.ownerId);
    await page.goto(path("/schedules"));
    await page.getByText("No schedules yet.").waitFor();
    await shot(page, "automation-schedules-empty", "wide");
    await page.getByRole("button", { name: "New schedule" }).click();
    const dialog = page.getByRole("dialog", { name: "New schedule" });
    await dialog.getByLabel("Name").fill("Hourly smoke");
    await dialog.getByLabel("Test plan", { exact: true }).selectOption({ label: "Smoke" });
    await dialog.getByLabel("Environment").selectOption({ label: "demo" });
    const cron = dialog.getByLabel("Cron expression");
    await cron.fill("not a cron");
    expect(
      await eventually(async () => (await cron.getAttribute("aria-invalid")) ?? undefined, "the cron error"),
    ).to.equal("true");
    expect(await errorAt(cron)).to.match(/\w/);
    await cron.fill("0 * * * *");
    await dialog.getByLabel("Time zone").fill("UTC");
    const ticks = dialog.getByTestId("next-ticks").locator("li");
    await eventually(async () => ((await ticks.count()) === 3 ? true : undefined), "three next times");
    await expectNoErrorAt(cron);
    // Each on the hour, in the zone chosen (the browser's locale decides 12 or 24 hours).
    for (const text of await ticks.allTextContents()) expect(text).to.match(/:00( [AP]M)? UTC$/);
    await shot(page, "automation-schedule-form", "wide");
    await dialog.getByRole("button", { name: "Create schedule" }).click();
    await page.getByText("Hourly smoke created.").waitFor();
    const row = page.getByRole("row", { name: /Hourly smoke/ });
    expect(await row.textContent())
      .to.include("Smoke")
      .and.include("demo")
      .and.include("0 * * * *")
      .and.include("Active");
    await shot(page, "automation-schedules", "wide");

    await row.getByRole("button", { name: "Pause Hourly smoke" }).click();
    await page.getByText("Hourly smoke paused.").waitFor();
    expect(await page.getByRole("row", { name: /Hourly smoke/ }).textContent()).to.include("Paused");
    await page.getByRole("link", { name: "Hourly smoke" }).click();
    await page.getByRole("heading", { name: "Recent ticks" }).waitFor();
    await page.getByText("No ticks yet.").waitFor();
    await shot(page, "automation-schedule", "wide");

    const narrow = await suite.signedIn("narrow", suite.project.ownerId);
    await narrow.goto(path("/schedules"));
    await narrow.getByRole("link", { name: "Hourly smoke" }).waitFor();
    await shot(narrow, "automation-schedules", "narrow");
    await narrow.getByRole("button", { name: "Edit Hourly smoke" }).click();
    await narrow.getByTestId("next-ticks").locator("li").nth(2).waitFor();
    await shot(narrow, "automation-schedule-form", "narrow");
  });

  it("creates a webhook whose secret shows once, logs a delivery after a run, and redelivers it", async () => {
    const page = await suite.signedIn("wide", suite.project.ownerId);
    await page.goto(path("/webhooks"));
    await page.getByText("No webhooks yet.").waitFor();
    await page.getByRole("button", { name: "New webhook" }).click();
    const dialog = page.getByRole("dialog", { name: "New webhook" });
    // A host name that does not resolve is refused at its field, nothing created.
    const url = dialog.getByLabel("URL");
    await url.fill("https://receiver.testrun-automation.invalid/hook");
    await dialog.getByLabel(/Run finished/).check();
    await dialog.getByLabel("Every run").check();
    await dialog.getByRole("button", { name: "Create webhook" }).click();
    expect(
      await eventually(async () => (await url.getAttribute("aria-invalid")) ?? undefined, "the URL's error"),
    ).to.equal("true");
    expect(await errorAt(url)).to.include("does not resolve");
    await shot(page, "automation-webhook-form", "wide");
    await url.fill(receiver.url);
    await dialog.getByRole("button", { name: "Create webhook" }).click();
    const secretDialog = page.getByRole("dialog", { name: "Webhook created" });
    await secretDialog.getByText("You will not see it again").waitFor();
    const secret = await secretDialog.getByLabel("Signing secret").inputValue();
    expect(secret).to.match(/^whsec_/);
    suite.secrets.push(secret);
    receiver.setSecrets([secret]);
    await shot(page, "automation-webhook-secret", "wide");
    await secretDialog.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.to.include(secret);
    await page.reload();
    await page.getByRole("link", { name: receiverLink() }).waitFor();
    expect(await page.content()).not.to.include(secret);
    // Who made it: the Owner, acting for themselves.
    expect(await page.getByRole("row", { name: receiverLink() }).textContent()).to.include("Owner");
    await shot(page, "automation-webhooks", "wide");

    const run = await suite.project.pipeline.start({ testPlan: "Smoke" });
    await suite.project.pipeline.finished(run.id);
    await page.getByRole("link", { name: receiverLink() }).click();
    await page.getByRole("heading", { name: "Deliveries" }).waitFor();
    const delivery = page.getByRole("row", { name: new RegExp(run.id) });
    await eventually(
      async () => {
        if (await delivery.count()) return true;
        await page.getByRole("button", { name: "Refresh" }).click();
        return undefined;
      },
      "the run's delivery in the log",
      60_000,
    );
    expect(await delivery.textContent()).to.include("run.finished");
    await shot(page, "automation-deliveries", "wide");
    // The receiver got it, signed with the secret shown once.
    const first = await eventually(
      async () => receiver.received.find((r) => r.body.includes(run.id)),
      "the run's event at the receiver",
    );
    expect(first.verified).to.equal(true);
    expect(first.type).to.equal("run.finished");
    await delivery.getByRole("button", { name: /^Redeliver / }).click();
    await page.getByText(/is being sent again now/).waitFor();
    // Sent again with the same webhook-id, so a receiver can tell it is the same event.
    const again = await eventually(
      async () => receiver.received.filter((r) => r.id === first.id)[1],
      "the redelivery at the receiver",
    );
    expect(again.verified).to.equal(true);

    const narrow = await suite.signedIn("narrow", suite.project.ownerId);
    await narrow.goto(page.url());
    await narrow.getByRole("row", { name: new RegExp(run.id) }).waitFor();
    await shot(narrow, "automation-deliveries", "narrow");
    await narrow.goto(path("/webhooks"));
    await narrow.getByRole("button", { name: `Rotate the secret of ${receiver.url}` }).click();
    await narrow.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = await narrow
      .getByRole("dialog", { name: "Copy the new signing secret" })
      .getByLabel("Signing secret")
      .inputValue();
    expect(rotated)
      .to.match(/^whsec_/)
      .and.not.equal(secret);
    suite.secrets.push(rotated);
    await shot(narrow, "automation-webhook-rotated", "narrow");
  });

  it("creates a plan's badge, shows it and its Markdown, serves it to anyone as SVG, and revokes it", async () => {
    const page = await suite.signedIn("wide", suite.project.ownerId);
    await page.goto(path(`/test-plans/${planId}`));
    await page.getByText("No badges for this plan yet.").waitFor();
    await page.getByRole("button", { name: "Create badge" }).click();
    const image = page.getByRole("img", { name: "Status badge" });
    await image.waitFor();
    await eventually(
      async () =>
        (await image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)) > 0
          ? true
          : undefined,
      "the badge image",
    );
    const url = (await image.getAttribute("src")) ?? "";
    expect(url).to.match(new RegExp(`^${suite.system.consoleUrl}/badges/[A-Za-z0-9_-]+\\.svg$`));
    const markdown = await page
      .getByRole("figure", { name: /Markdown for the demo badge/ })
      .locator("code")
      .textContent();
    // The badge, linking to the plan's runs on its environment.
    expect(markdown).to.match(/\)\]\(.*&environment=[^)]+\)$/);
    expect(markdown?.startsWith(`[![tests](${url})](${path(`/runs?plan=${planId}&environment=`)}`)).to.equal(
      true,
    );
    await shot(page, "automation-badges", "wide");

    // Anyone: no cookie. The plan's run above passed on demo.
    const served = await fetch(url);
    expect(served.status).to.equal(200);
    expect(served.headers.get("content-type")).to.equal("image/svg+xml; charset=utf-8");
    expect(served.headers.get("set-cookie")).to.equal(null);
    const svg = await served.text();
    expect(svg).to.include('aria-label="tests: passing"');
    expect(svg).not.to.include("Smoke").and.not.to.include("demo");
    const unknown = await fetch(`${suite.system.consoleUrl}/badges/nosuchbadgetoken0123456789.svg`);
    expect(unknown.status).to.equal(404);
    expect(await unknown.text()).to.include('aria-label="tests: unknown"');

    const narrow = await suite.signedIn("narrow", suite.project.ownerId);
    await narrow.goto(page.url());
    await narrow.getByRole("img", { name: "Status badge" }).waitFor();
    await shot(narrow, "automation-badges", "narrow");

    await page.getByRole("button", { name: "Revoke badge" }).click();
    await page
      .getByRole("dialog", { name: /Revoke the demo badge/ })
      .getByRole("button", { name: "Revoke badge" })
      .click();
    await page.getByText("No badges for this plan yet.").waitFor();
    const revoked = await fetch(url);
    expect(revoked.status).to.equal(404);
    expect(await revoked.text()).to.include('aria-label="tests: unknown"');
  });

  it("lets a Viewer read schedules and webhooks without ways to change them, each URL by its origin only", async () => {
    const page = await suite.signedIn("narrow", viewerId);
    await page.goto(path("/schedules"));
    await page.getByRole("link", { name: "Hourly smoke" }).waitFor();
    expect(await page.getByRole("button", { name: "New schedule" }).count()).to.equal(0);
    expect(await page.getByRole("button", { name: /^Pause / }).count()).to.equal(0);
    await page.goto(path("/webhooks"));
    const origin = new URL(receiver.url).origin;
    const link = page.getByRole("link", { name: `${origin}/…`, exact: true });
    await link.waitFor();
    expect(await page.content()).not.to.include(receiver.url);
    expect(await page.getByRole("row", { name: new RegExp(`${origin}/…`) }).textContent()).to.include(
      "Owner",
    );
    await shot(page, "automation-webhooks-viewer", "narrow");
    await link.click();
    await page.getByRole("heading", { name: "Deliveries" }).waitFor();
    expect(await page.getByRole("button", { name: /^Redeliver / }).count()).to.equal(0);
    expect(await page.content()).not.to.include(receiver.url);
    await shot(page, "automation-deliveries-viewer", "narrow");
    // The console's API gives a Viewer the origin alone too, whatever the page shows.
    const viewer = consoleClient(suite.system, await signIn(suite.system, viewerId));
    const { webhooks } = await viewer.listWebhooks({ projectId: suite.project.projectId });
    expect(webhooks.map((w) => w.url)).to.deep.equal([`${origin}/…`]);
  });

  it("pauses a removed Editor's webhook, saying why, sends it nothing, and the Owner resumes it as theirs", async () => {
    const other = await startWebhookReceiver({ path: "/hook/eddie" });
    try {
      const eddie = await suite.member("eddie@acme-automation.example", Role.EDITOR);
      const page = await suite.signedIn("wide", eddie.id);
      await page.goto(path("/webhooks"));
      await page.getByRole("button", { name: "New webhook" }).click();
      const dialog = page.getByRole("dialog", { name: "New webhook" });
      await dialog.getByLabel("URL").fill(other.url);
      await dialog.getByLabel(/Run finished/).check();
      await dialog.getByLabel("Every run").check();
      await dialog.getByRole("button", { name: "Create webhook" }).click();
      const secretDialog = page.getByRole("dialog", { name: "Webhook created" });
      suite.secrets.push(await secretDialog.getByLabel("Signing secret").inputValue());
      await secretDialog.getByRole("button", { name: "Done" }).click();
      await removeMember(createCliContext(suite.system.env), { memberId: eddie.id });

      const run = await suite.project.pipeline.start({ testPlan: "Smoke" });
      await suite.project.pipeline.finished(run.id);
      const owner = await suite.signedIn("wide", suite.project.ownerId);
      await owner.goto(path("/webhooks"));
      const row = owner.getByRole("row", { name: linkTo(other.url) });
      const text = await eventually(
        async () => {
          const now = (await row.textContent()) ?? "";
          if (now.includes("Paused")) return now;
          await owner.reload();
          return undefined;
        },
        "the webhook paused",
        60_000,
      );
      expect(text)
        .to.include("eddie")
        .and.match(/was removed from the organization/);
      // Nothing reached the removed Editor's receiver: not this run's event, nor any other.
      expect(other.received).to.deep.equal([]);
      await shot(owner, "automation-webhook-paused", "wide");

      const narrow = await suite.signedIn("narrow", suite.project.ownerId);
      await narrow.goto(path("/webhooks"));
      await narrow.getByRole("button", { name: `Resume ${other.url}` }).click();
      await narrow.getByText(/it now acts for you/).waitFor();
      const resumed = (await narrow.getByRole("row", { name: linkTo(other.url) }).textContent()) ?? "";
      expect(resumed).to.include("Active").and.include("acts for Owner").and.not.include("was removed");
      await shot(narrow, "automation-webhook-resumed", "narrow");
    } finally {
      await other.close();
    }
  });

  it("no webhook secret or link token the browser saw is in any log line", () => {
    expect(suite.secrets.length).to.be.greaterThan(3);
    for (const [name, child] of suite.system.processes) {
      const output = child.output().join("\n");
      for (const secret of suite.secrets)
        expect(output.includes(secret), `${name} logged a secret`).to.equal(false);
    }
  });
});
