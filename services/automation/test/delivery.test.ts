// Webhook delivery against real catalog, runs, PostgreSQL and a local receiver that checks
// signatures with the `standardwebhooks` package (scripts/webhook-receiver.ts): a FAILED delivery
// redelivered, an attempt that times out retried, and an address refused at delivery time
// (docs/automation.md, "Delivery, retries and bounds" and "Egress"). Retry delays and the attempt
// timeout are set short here.
import { randomBytes } from "node:crypto";
import { promises as dns } from "node:dns";
import { type Client, Code } from "@connectrpc/connect";
import {
  type AutomationService,
  type Delivery,
  DeliveryState,
  NotifyMode,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { type Run, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Resolve } from "@testrun/kit/egress";
import {
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
import { type InProcessAutomation, startAutomation as startInProcess } from "./in-process.js";

describe("automation service: webhook delivery, redelivery, timeouts and refusals", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  let receiver: WebhookReceiver;
  const started: InProcessAutomation[] = [];
  let baseEnv: Record<string, string>;

  before(async () => {
    stack = await startInProcessRunsStack();
    baseEnv = {
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
      TICK_INTERVAL_MS: "100",
      FOLLOW_INTERVAL_MS: "100",
      WEBHOOK_RETRY_DELAYS_MS: "200,200,200",
      WEBHOOK_TIMEOUT_MS: "500",
      WEBHOOK_ALLOW_HTTP: "true",
    };
  });
  beforeEach(async () => {
    project = await seedRunsProject(stack, 1000n);
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    for (const automation of started.splice(0)) await automation.stop();
  });
  after(async () => {
    await stack?.stop();
  });

  /** An automation service on `databaseUrl` (a new one by default) with `egress`, its allowance. */
  async function startAutomation(egress: Record<string, string>, databaseUrl?: string, resolve?: Resolve) {
    const automation = await startInProcess(stack, { ...baseEnv, ...egress }, databaseUrl, resolve);
    started.push(automation);
    return automation;
  }
  const loopbackAllowed = { EGRESS_ALLOW_CIDRS: "127.0.0.0/8,::1/128" };
  const editor = () => member(project.members.editor);

  /** Starts a run of the project's plan and completes every test of it as `status`. */
  async function finishedRun(status: TestStatus): Promise<Run> {
    const { run } = await stack.runs.startRun({
      actor: editor(),
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

  async function webhookTo(client: Client<typeof AutomationService>, url: string) {
    const created = await client.createWebhook({
      actor: editor(),
      projectId: project.projectId,
      url,
      events: [WebhookEvent.RUN_FINISHED],
      notifyMode: NotifyMode.EVERY_RUN,
    });
    return { id: created.webhook?.id ?? "", secret: created.secret };
  }

  /** A webhook to `url` (the receiver's by default) whose signatures the receiver checks. */
  async function receiverWebhook(client: Client<typeof AutomationService>, url = receiver.url) {
    const webhook = await webhookTo(client, url);
    receiver.setSecrets([webhook.secret]);
    return webhook;
  }

  /** The webhook's one delivery once `done` says it is as expected. */
  const deliveryWhen = (
    client: Client<typeof AutomationService>,
    webhookId: string,
    what: string,
    done: (d: Delivery) => boolean,
  ) =>
    eventually(
      async () => {
        const { deliveries } = await client.listDeliveries({
          actor: editor(),
          projectId: project.projectId,
          webhookId,
        });
        return deliveries.length === 1 && deliveries[0] && done(deliveries[0]) ? deliveries[0] : undefined;
      },
      what,
      30_000,
    );

  it("redelivers a FAILED delivery with the same webhook-id, and it is delivered", async () => {
    const { client } = await startAutomation(loopbackAllowed);
    const webhook = await receiverWebhook(client);
    receiver.answerWith(500);
    const run = await finishedRun(TestStatus.PASSED);
    // The first attempt and three retries answered 500: FAILED.
    const failed = await deliveryWhen(
      client,
      webhook.id,
      "the delivery FAILED",
      (d) => d.state === DeliveryState.FAILED,
    );
    expect(failed.attempts).to.equal(4);
    expect(failed.lastResponseCode).to.equal(500);
    expect(failed.lastError).to.include("answered 500");
    expect(receiver.received.map((r) => r.id)).to.deep.equal(Array(4).fill(failed.id));

    receiver.answerWith(200);
    const { delivery } = await client.redeliver({
      actor: editor(),
      projectId: project.projectId,
      deliveryId: failed.id,
    });
    expect(delivery?.state).to.equal(DeliveryState.PENDING);
    const delivered = await deliveryWhen(
      client,
      webhook.id,
      "the redelivery delivered",
      (d) => d.state === DeliveryState.DELIVERED,
    );
    expect(delivered.attempts).to.equal(5);
    expect(delivered.lastResponseCode).to.equal(200);
    expect(delivered.lastError).to.equal("");
    const last = receiver.received.at(-1);
    expect(receiver.received).to.have.length(5);
    expect(last?.id).to.equal(failed.id);
    expect(last?.verified).to.equal(true);
    expect(JSON.parse(last?.body ?? "{}").data.run.id).to.equal(run.id);
  });

  it("redelivers a PENDING delivery at once when its retry is far off, never while an attempt is under way", async () => {
    // Retries two minutes apart: longer than a claim lasts, so only Redeliver brings one sooner. An
    // attempt held for 5 s: Redeliver is surely called while it is under way. Two replicas: the one
    // not busy with the attempt would take a delivery made due again.
    const env = { ...loopbackAllowed, WEBHOOK_RETRY_DELAYS_MS: "120000", WEBHOOK_TIMEOUT_MS: "5000" };
    const { client, databaseUrl } = await startAutomation(env);
    await startAutomation(env, databaseUrl);
    const webhook = await receiverWebhook(client);
    receiver.answerWith("hang");
    await finishedRun(TestStatus.PASSED);
    await eventually(async () => receiver.received[0], "the first attempt at the receiver");
    const { deliveries } = await client.listDeliveries({
      actor: editor(),
      projectId: project.projectId,
      webhookId: webhook.id,
    });
    const redeliver = () =>
      client.redeliver({
        actor: editor(),
        projectId: project.projectId,
        deliveryId: deliveries[0]?.id ?? "",
      });
    // While the receiver holds the first attempt: nothing more is sent.
    await redeliver();
    const waiting = await deliveryWhen(
      client,
      webhook.id,
      "the held attempt ended by its deadline",
      (d) => d.attempts === 1,
    );
    expect(waiting.state).to.equal(DeliveryState.PENDING);
    expect(receiver.received).to.have.length(1);

    // Its retry two minutes away: Redeliver sends it now.
    receiver.answerWith(200);
    await redeliver();
    const delivered = await deliveryWhen(
      client,
      webhook.id,
      "the redelivery delivered",
      (d) => d.state === DeliveryState.DELIVERED,
    );
    expect(delivered.attempts).to.equal(2);
    expect(receiver.received.map((r) => r.id)).to.deep.equal([delivered.id, delivered.id]);
  });

  it("retries an attempt the receiver does not answer within WEBHOOK_TIMEOUT_MS, then delivers it", async () => {
    const { client } = await startAutomation(loopbackAllowed);
    const webhook = await receiverWebhook(client);
    receiver.answerWith("hang");
    await finishedRun(TestStatus.FAILED);
    const timedOut = await deliveryWhen(
      client,
      webhook.id,
      "an attempt timed out",
      (d) => d.state === DeliveryState.PENDING && d.attempts >= 1,
    );
    expect(timedOut.lastError).to.equal("no answer within 500 ms");
    expect(timedOut.lastResponseCode).to.equal(undefined);
    receiver.answerWith(200);
    const delivered = await deliveryWhen(
      client,
      webhook.id,
      "delivered once answered",
      (d) => d.state === DeliveryState.DELIVERED,
    );
    expect(delivered.attempts).to.be.within(2, 4);
    // Every attempt, the unanswered ones too, carried the one webhook-id and a valid signature.
    expect(new Set(receiver.received.map((r) => r.id))).to.deep.equal(new Set([delivered.id]));
    expect(receiver.received.every((r) => r.verified)).to.equal(true);
  });

  it("ends an attempt whose host name does not resolve within WEBHOOK_TIMEOUT_MS, and delivers once it does", async () => {
    // A resolver that stops answering for the receiver's name after the webhook is saved, as a
    // DNS server that went quiet, until the test lets it answer again.
    const name = "hooks.example.test";
    /** Pending while the resolver does not answer for `name`. */
    let quiet: Promise<void> | undefined;
    let answerAgain = () => {};
    const resolve: Resolve = async (hostname, family) => {
      if (hostname !== name) return dns.lookup(hostname, { all: true, family: family as 0 | 4 | 6 });
      await quiet;
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const { client } = await startAutomation(loopbackAllowed, undefined, resolve);
    const webhook = await receiverWebhook(client, receiver.url.replace("127.0.0.1", name));
    quiet = new Promise<void>((resume) => (answerAgain = resume));
    // Saving another webhook to it is not held either: the field says to try again.
    const refused = await rejects(
      webhookTo(client, receiver.url.replace("127.0.0.1", name)),
      Code.InvalidArgument,
    );
    expect(refused.rawMessage).to.contain("could not be resolved just now: try again in a moment");
    await finishedRun(TestStatus.PASSED);
    const timedOut = await deliveryWhen(
      client,
      webhook.id,
      "an attempt ended by its deadline while the name did not resolve",
      (d) => d.state === DeliveryState.PENDING && d.attempts >= 1,
    );
    expect(timedOut.lastError).to.equal("no answer within 500 ms");
    expect(receiver.received).to.have.length(0);

    answerAgain();
    const delivered = await deliveryWhen(
      client,
      webhook.id,
      "delivered once the name resolves",
      (d) => d.state === DeliveryState.DELIVERED,
    );
    expect(delivered.lastError).to.equal("");
    expect(receiver.received.map((r) => r.verified)).to.deep.equal([true]);
  });

  it("refuses at delivery time an address the rules no longer allow, saying why, and sends nothing", async () => {
    // Created while loopback was allowed, to a host name (localhost) that resolves to loopback;
    // then the service restarts without the allowance, as a production one runs.
    const before = await startAutomation(loopbackAllowed);
    const url = receiver.url.replace("127.0.0.1", "localhost");
    const webhook = await webhookTo(before.client, url);
    await before.stop();
    const { client } = await startAutomation({ EGRESS_ALLOW_CIDRS: "" }, before.databaseUrl);
    await finishedRun(TestStatus.FAILED);
    const refused = await deliveryWhen(client, webhook.id, "the attempt refused", (d) => d.attempts >= 1);
    expect(refused.lastError).to.equal(
      "refused: the URL goes to an address webhooks may not reach (loopback, link-local or metadata, a special-purpose range, or the cluster)",
    );
    expect(refused.lastResponseCode).to.equal(undefined);
    // Retried like any failure, then FAILED; never sent.
    const failed = await deliveryWhen(
      client,
      webhook.id,
      "the delivery FAILED",
      (d) => d.state === DeliveryState.FAILED,
    );
    expect(failed.attempts).to.equal(4);
    expect(receiver.received).to.have.length(0);
  });
});
