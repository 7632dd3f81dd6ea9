// Webhooks act for a member, as schedules do (docs/automation.md, "Acting member"), and keep their
// URL sealed (docs/automation.md, "URLs at rest"), against real catalog, runs, PostgreSQL and local
// receivers: a removed member's webhook paused with the reason, nothing sent after the removal (a
// delivery already queued and one redelivered included); a member made a Viewer the same; resuming
// by an Editor and not a Viewer; who made and last changed each webhook in the list; Viewers given
// the URL's origin only; no plain URL in the database; and webhooks made before all this (plain
// URL, no member) sealed and paused once the service starts on the migrated schema.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Client, Code } from "@connectrpc/connect";
import {
  type AutomationService,
  type Delivery,
  DeliveryState,
  NotifyMode,
  type Webhook,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { CatalogService, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Run, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { migrateDatabase, openDatabase, serviceClient } from "@testrun/kit";
import {
  createTestDatabase,
  eventually,
  type InProcessRunsStack,
  leaseOf,
  member,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { startWebhookReceiver, type WebhookReceiver } from "../../../scripts/webhook-receiver.js";
import { database } from "../src/db/index.js";
import { SecretCipher } from "../src/secrets.js";
import { type InProcessAutomation, startAutomation } from "./in-process.js";

describe("automation service: webhooks act for a member and keep their URL sealed", () => {
  let stack: InProcessRunsStack;
  let automation: InProcessAutomation;
  let client: Client<typeof AutomationService>;
  let project: RunsProject;
  const receivers: WebhookReceiver[] = [];
  const key = randomBytes(32).toString("base64");
  // A retry 3 s after a failed attempt: a delivery is surely queued (not under way) in between.
  const env = {
    WEBHOOK_SECRETS_KEY: key,
    TICK_INTERVAL_MS: "100",
    FOLLOW_INTERVAL_MS: "100",
    WEBHOOK_RETRY_DELAYS_MS: "3000,3000",
    WEBHOOK_TIMEOUT_MS: "2000",
    WEBHOOK_ALLOW_HTTP: "true",
    EGRESS_ALLOW_CIDRS: "127.0.0.0/8",
  };

  before(async () => {
    stack = await startInProcessRunsStack();
    automation = await startAutomation(stack, env);
    client = automation.client;
  });
  beforeEach(async () => {
    project = await seedRunsProject(stack, 1000n);
  });
  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.close();
  });
  after(async () => {
    await automation?.stop();
    await stack?.stop();
  });

  const as = (role: "owner" | "admin" | "editor" | "viewer") => member(project.members[role]);
  const receiver = async (path?: string) => {
    const started = await startWebhookReceiver(path ? { path } : {});
    receivers.push(started);
    return started;
  };

  /** A webhook to the receiver, every finished run, made by `by`; the receiver checks its signatures. */
  async function webhookFor(by: ReturnType<typeof member>, to: WebhookReceiver): Promise<Webhook> {
    const { webhook, secret } = await client.createWebhook({
      actor: by,
      projectId: project.projectId,
      url: to.url,
      events: [WebhookEvent.RUN_FINISHED],
      notifyMode: NotifyMode.EVERY_RUN,
    });
    to.setSecrets([secret]);
    return webhook as Webhook;
  }

  /** Starts a run of the project's plan and completes every test of it. */
  async function finishedRun(status = TestStatus.FAILED): Promise<Run> {
    const { run } = await stack.runs.startRun({
      actor: as("admin"),
      projectId: project.projectId,
      selection: { case: "testPlan", value: project.planId },
    });
    const { run: started } = await stack.runs.getRun({
      actor: operator(),
      projectId: project.projectId,
      runId: run?.id ?? "",
    });
    for (const test of started?.tests ?? []) {
      const { assignment } = await stack.executor.claimTest({ testResultId: test.id, executorId: "pod-a/0" });
      await stack.executor.completeTest({ ...leaseOf(assignment), status, summary: "", durationMs: 5n });
    }
    return run as Run;
  }

  const deliveriesOf = async (webhookId: string, actor = as("admin")): Promise<Delivery[]> =>
    (await client.listDeliveries({ actor, projectId: project.projectId, webhookId })).deliveries;
  const webhookOf = async (webhookId: string, actor = as("admin")): Promise<Webhook> => {
    const { webhooks } = await client.listWebhooks({ actor, projectId: project.projectId });
    return webhooks.find((w) => w.id === webhookId) as Webhook;
  };
  const runOf = (delivery: Delivery) => delivery.runId ?? "";

  it("pauses a removed member's webhook with the reason and sends nothing after the removal, queued or redelivered", async () => {
    const to = await receiver();
    const webhook = await webhookFor(as("editor"), to);
    const first = await finishedRun();
    await eventually(async () => to.received.find((r) => r.body.includes(first.id)), "the first run's event");
    // The second run's event is answered 500: it waits, queued, for its retry 3 s later.
    to.answerWith(500);
    const second = await finishedRun();
    const queued = await eventually(async () => {
      const found = (await deliveriesOf(webhook.id)).find((d) => runOf(d) === second.id);
      return found?.attempts === 1 && found.state === DeliveryState.PENDING ? found : undefined;
    }, "the second run's delivery queued after one attempt");
    await stack.catalog.catalog.removeMember({ actor: operator(), memberId: project.members.editor });
    const removedAt = Date.now();
    to.answerWith(200);
    // The removed member cannot redeliver; an Admin's redelivery is sent for the webhook's member.
    await rejects(
      client.redeliver({ actor: as("editor"), projectId: project.projectId, deliveryId: queued.id }),
      Code.PermissionDenied,
    );
    const delivered = (await deliveriesOf(webhook.id)).find((d) => runOf(d) === first.id) as Delivery;
    await client.redeliver({ actor: as("admin"), projectId: project.projectId, deliveryId: delivered.id });

    const paused = await eventually(async () => {
      const now = await webhookOf(webhook.id);
      return now.paused && now.pausedReason ? now : undefined;
    }, "the webhook paused");
    expect(paused.pausedReason).to.match(
      /^its member A editor \(.+@example\.com\) was removed from the organization/,
    );
    expect(paused.pausedReason).to.include("resume it to act for yourself");
    const stopped = await eventually(async () => {
      const all = await deliveriesOf(webhook.id);
      return all.every((d) => d.state === DeliveryState.FAILED) ? all : undefined;
    }, "both deliveries stopped");
    for (const d of stopped)
      expect(d.lastError).to.match(/^not sent: the webhook is paused: its member A editor .* was removed/);
    // The queued one kept its one attempt: none was made for it after the removal.
    expect(stopped.find((d) => d.id === queued.id)?.attempts).to.equal(1);
    expect(to.received.filter((r) => r.receivedAt > removedAt)).to.deep.equal([]);
    expect(to.received).to.have.length(2);

    // A later run is not even queued for it: another webhook hearing of that run shows it was read.
    const other = await receiver();
    await webhookFor(as("admin"), other);
    const third = await finishedRun();
    await eventually(
      async () => other.received.find((r) => r.body.includes(third.id)),
      "the third run's event",
    );
    expect((await deliveriesOf(webhook.id)).map(runOf)).not.to.include(third.id);
    const refused = await rejects(
      client.redeliver({ actor: as("admin"), projectId: project.projectId, deliveryId: queued.id }),
      Code.FailedPrecondition,
    );
    expect(refused.rawMessage).to.match(
      /^the webhook is paused, and sends nothing until resumed: its member A editor/,
    );
    expect(to.received).to.have.length(2);
  });

  it("pauses when its member becomes a Viewer; only an Editor or above resumes it, who it then acts for", async () => {
    const to = await receiver();
    const webhook = await webhookFor(as("editor"), to);
    await stack.catalog.catalog.changeMemberRole({
      actor: operator(),
      memberId: project.members.editor,
      role: Role.VIEWER,
    });
    const run = await finishedRun();
    const paused = await eventually(async () => {
      const now = await webhookOf(webhook.id);
      return now.pausedReason ? now : undefined;
    }, "the webhook paused");
    expect(paused.paused).to.equal(true);
    expect(paused.pausedReason).to.match(/is now a Viewer and can no longer manage webhooks; resume it/);
    expect(to.received).to.deep.equal([]);
    const [stopped] = await deliveriesOf(webhook.id);
    expect(stopped?.state).to.equal(DeliveryState.FAILED);
    expect(stopped?.attempts).to.equal(0);

    // Neither the demoted member nor another Viewer may resume it.
    for (const viewer of [as("editor"), as("viewer")])
      await rejects(
        client.updateWebhook({
          actor: viewer,
          projectId: project.projectId,
          webhookId: webhook.id,
          paused: false,
        }),
        Code.PermissionDenied,
      );
    // An operator may not either: a webhook needs a member to act for.
    await rejects(
      client.updateWebhook({
        actor: operator(),
        projectId: project.projectId,
        webhookId: webhook.id,
        paused: false,
      }),
      Code.InvalidArgument,
    );
    const { webhook: resumed } = await client.updateWebhook({
      actor: as("admin"),
      projectId: project.projectId,
      webhookId: webhook.id,
      paused: false,
    });
    expect(resumed?.paused).to.equal(false);
    expect(resumed?.pausedReason).to.equal("");
    expect(resumed?.actsFor?.memberId).to.equal(project.members.admin);
    expect(resumed?.actsFor?.displayName).to.equal("A admin");
    // Resumed, the stopped delivery may be sent again: for the Admin now.
    await client.redeliver({
      actor: as("admin"),
      projectId: project.projectId,
      deliveryId: stopped?.id ?? "",
    });
    const got = await eventually(async () => to.received[0], "the redelivery at the receiver");
    expect(got.verified).to.equal(true);
    expect(JSON.parse(got.body).data.run.id).to.equal(run.id);
  });

  it("lists who made each webhook, who last changed it and who it acts for; only members make them", async () => {
    const to = await receiver();
    const made = await webhookFor(as("editor"), to);
    expect(made.createdBy?.kind.case).to.equal("member");
    expect(made.createdBy?.kind.value).to.include({
      memberId: project.members.editor,
      displayName: "A editor",
    });
    expect(made.updatedBy).to.equal(undefined);
    expect(made.updatedAt).to.equal(undefined);
    expect(made.actsFor?.memberId).to.equal(project.members.editor);
    // A change of notify mode is recorded, the member it acts for kept.
    await client.updateWebhook({
      actor: as("admin"),
      projectId: project.projectId,
      webhookId: made.id,
      notifyMode: NotifyMode.FAILURES_AND_RECOVERIES,
    });
    let listed = await webhookOf(made.id, as("viewer"));
    expect(listed.createdBy?.kind.value).to.include({ memberId: project.members.editor });
    expect(listed.updatedBy?.kind.value).to.include({
      memberId: project.members.admin,
      displayName: "A admin",
    });
    expect(listed.actsFor?.memberId).to.equal(project.members.editor);
    expect(listed.updatedAt).not.to.equal(undefined);
    // Changing what it sends makes the changer the member it acts for.
    await client.updateWebhook({
      actor: as("owner"),
      projectId: project.projectId,
      webhookId: made.id,
      events: [WebhookEvent.RUN_FAILED],
    });
    listed = await webhookOf(made.id);
    expect(listed.actsFor?.memberId).to.equal(project.members.owner);
    expect(listed.updatedBy?.kind.value).to.include({ memberId: project.members.owner });
    // An operator's rotation is recorded by the name it gave.
    await client.rotateWebhookSecret({ actor: operator(), projectId: project.projectId, webhookId: made.id });
    listed = await webhookOf(made.id);
    expect(listed.updatedBy?.kind).to.deep.include({ case: "operator" });
    expect(listed.updatedBy?.kind.value).to.include({ name: "test" });
    expect(listed.createdBy?.kind.value).to.include({ memberId: project.members.editor });
    const refused = await rejects(
      client.createWebhook({
        actor: operator(),
        projectId: project.projectId,
        url: to.url,
        events: [WebhookEvent.RUN_FAILED],
      }),
      Code.InvalidArgument,
    );
    expect(refused.rawMessage).to.match(/acts for a member/);
  });

  it("shows Viewers the URL's origin only and Editors all of it; stores it sealed; errors never quote it", async () => {
    const token = `T0${randomBytes(8).toString("hex")}`;
    const path = `/services/${token}/hook?token=${token}`;
    // A receiver answering 500 with the URL it was asked for, as a careless one might.
    const echo = createServer((req, res) => res.writeHead(500).end(`no hook at ${req.url}`));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    try {
      const origin = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
      const url = `${origin}${path}`;
      const { webhook } = await client.createWebhook({
        actor: as("editor"),
        projectId: project.projectId,
        url,
        events: [WebhookEvent.RUN_FINISHED],
        notifyMode: NotifyMode.EVERY_RUN,
      });
      expect(webhook?.url).to.equal(url);
      for (const role of ["editor", "admin", "owner"] as const)
        expect((await webhookOf(webhook?.id ?? "", as(role))).url, role).to.equal(url);
      expect((await webhookOf(webhook?.id ?? "", operator())).url).to.equal(url);
      const seen = await webhookOf(webhook?.id ?? "", as("viewer"));
      expect(seen.url).to.equal(`${origin}/…`);
      expect(JSON.stringify(seen, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.to.include(token);

      await finishedRun();
      const failed = await eventually(async () => {
        const [d] = await deliveriesOf(webhook?.id ?? "", as("viewer"));
        return d?.lastResponseCode === 500 ? d : undefined;
      }, "the receiver's 500");
      expect(failed.lastError).to.equal("answered 500: no hook at [url]");

      // At rest: no column of the row holds the URL or its token; it opens under the service's key.
      const orm = await openDatabase(automation.databaseUrl, database);
      try {
        const [row] = await orm.em
          .fork()
          .execute<{ url: string | null; url_sealed: string; url_origin: string; text: string }[]>(
            "select url, url_sealed, url_origin, row_to_json(w)::text as text from automation.webhooks w where id = ?",
            [webhook?.id],
          );
        expect(row?.url).to.equal(null);
        expect(row?.url_origin).to.equal(origin);
        expect(row?.text).not.to.include(token);
        expect(new SecretCipher(key).open(row?.url_sealed ?? "", webhook?.id ?? "", "url")).to.equal(url);
        // Sealed for this webhook's URL alone: not as its secret, not as another webhook's.
        expect(() => new SecretCipher(key).open(row?.url_sealed ?? "", webhook?.id ?? "")).to.throw();
        const [{ n }] = (await orm.em
          .fork()
          .execute("select count(*)::int as n from automation.deliveries where last_error like ?", [
            `%${token}%`,
          ])) as [{ n: number }];
        expect(n).to.equal(0);
      } finally {
        await orm.close();
      }
      expect(automation.lines().join("\n")).not.to.include(token);
    } finally {
      echo.close();
    }
  });

  it("sends nothing while the catalog cannot say whether the member may, and sends it once it can", async () => {
    const to = await receiver();
    const first = await startAutomation(stack, env);
    const created = await first.client.createWebhook({
      actor: as("editor"),
      projectId: project.projectId,
      url: to.url,
      events: [WebhookEvent.RUN_FINISHED],
      notifyMode: NotifyMode.EVERY_RUN,
    });
    const webhookId = created.webhook?.id;
    to.setSecrets([created.secret]);
    await first.stop();
    // The same database, a catalog that never answers (nothing listens on port 1).
    const unchecked = await startAutomation(
      stack,
      env,
      first.databaseUrl,
      undefined,
      serviceClient(CatalogService, "http://127.0.0.1:1", { token: "unused", timeoutMs: 500 }),
    );
    const orm = await openDatabase(first.databaseUrl, database);
    try {
      await finishedRun();
      const put = await eventually(async () => {
        const [row] = await orm.em
          .fork()
          .execute<{ state: string; attempts: number; last_error: string }[]>(
            "select state, attempts, last_error from automation.deliveries where webhook_id = ?",
            [webhookId],
          );
        return row?.last_error ? row : undefined;
      }, "the delivery put off");
      expect(put).to.deep.equal({
        state: "pending",
        attempts: 0,
        last_error: "not sent yet: could not check that its member may still manage webhooks; trying again",
      });
      expect(to.received).to.deep.equal([]);
      expect(unchecked.lines().join("\n")).to.include("could not check a webhook's member with the catalog");
      await unchecked.stop();
      // With the catalog back, it is checked and sent.
      const checked = await startAutomation(stack, env, first.databaseUrl);
      try {
        const got = await eventually(async () => to.received[0], "the delivery once checked", 30_000);
        expect(got.verified).to.equal(true);
      } finally {
        await checked.stop();
      }
    } finally {
      await unchecked.stop();
      await orm.close();
    }
  });

  it("seals the URLs of webhooks made before and pauses them, having no member, until an Editor resumes one", async () => {
    const url = await createTestDatabase(String(process.env.DATABASE_URL));
    const orm = await openDatabase(url, database);
    const to = await receiver(`/hook/legacy-${randomBytes(6).toString("hex")}`);
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    to.setSecrets([secret]);
    try {
      await orm.em.getConnection().execute('create schema if not exists "automation"');
      await orm.migrator.up({ to: "Migration20261127204502_init" });
      const sql = (text: string, params: unknown[] = []) => orm.em.getConnection().execute(text, params);
      // As the previous release stored them: the URL plain, no member; one delivery queued.
      await sql(
        `insert into automation.webhooks (id, project_id, url, kind, events, notify_mode, secret_sealed, created_at)
         values ('whk_legacy', ?, ?, 'standard', '["run.finished"]', 'every_run', ?, now())`,
        [project.projectId, to.url, new SecretCipher(key).seal(secret, "whk_legacy")],
      );
      await sql(
        `insert into automation.deliveries (id, webhook_id, project_id, event_type, body, state, next_attempt_at, created_at)
         values ('dlv_01legacy0000000000000000', 'whk_legacy', ?, 'run.finished', '{"type":"run.finished"}', 'pending', now(), now())`,
        [project.projectId],
      );
      // An earlier attempt's error quoting the receiver's path, as stored then.
      await sql(
        `insert into automation.deliveries (id, webhook_id, project_id, event_type, body, state, attempts, last_error, created_at)
         values ('dlv_00legacy0000000000000000', 'whk_legacy', ?, 'run.finished', '{}', 'failed', 8, ?, now())`,
        [project.projectId, `answered 404: no hook at ${new URL(to.url).pathname}`],
      );
      await migrateDatabase(orm, database);
      const [quoted] = await sql(
        "select last_error from automation.deliveries where id = 'dlv_00legacy0000000000000000'",
      );
      expect(quoted?.last_error).to.equal("answered 404: no hook at [url]");
      const legacy = await startAutomation(stack, env, url);
      try {
        const sealed = await eventually(async () => {
          const [row] = await sql(
            "select url, url_sealed, url_origin from automation.webhooks where id = 'whk_legacy'",
          );
          return row?.url === null ? row : undefined;
        }, "the URL sealed");
        expect(sealed.url_origin).to.equal(new URL(to.url).origin);
        expect(new SecretCipher(key).open(sealed.url_sealed, "whk_legacy", "url")).to.equal(to.url);
        const list = async (actor: ReturnType<typeof member>) =>
          (await legacy.client.listWebhooks({ actor, projectId: project.projectId })).webhooks[0] as Webhook;
        const shown = await list(as("editor"));
        expect(shown.url).to.equal(to.url);
        expect(shown.paused).to.equal(true);
        expect(shown.pausedReason).to.match(/^no member recorded: .*resume it to act for yourself$/);
        expect(shown.createdBy).to.equal(undefined);
        expect(shown.actsFor).to.equal(undefined);
        expect((await list(as("viewer"))).url).to.equal(`${new URL(to.url).origin}/…`);
        const [queued] = (
          await legacy.client.listDeliveries({
            actor: as("editor"),
            projectId: project.projectId,
            webhookId: "whk_legacy",
          })
        ).deliveries;
        expect(queued?.state).to.equal(DeliveryState.FAILED);
        expect(queued?.lastError).to.match(/^not sent: /);

        const { webhook } = await legacy.client.updateWebhook({
          actor: as("editor"),
          projectId: project.projectId,
          webhookId: "whk_legacy",
          paused: false,
        });
        expect(webhook?.actsFor?.memberId).to.equal(project.members.editor);
        expect(webhook?.updatedBy?.kind.value).to.include({ memberId: project.members.editor });
        await legacy.client.redeliver({
          actor: as("editor"),
          projectId: project.projectId,
          deliveryId: queued?.id ?? "",
        });
        const got = await eventually(async () => to.received[0], "the legacy webhook's delivery");
        expect(got.verified).to.equal(true);
      } finally {
        await legacy.stop();
      }
    } finally {
      await orm.close();
    }
  });
});
