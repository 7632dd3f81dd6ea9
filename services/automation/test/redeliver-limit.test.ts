// Redeliver's bounds (services/automation/src/redeliveries.ts): per caller and per webhook, each a
// token bucket of a minute on the replica, against real catalog, runs, PostgreSQL and a local
// receiver. Past either, RESOURCE_EXHAUSTED saying which bound and when to try again, and nothing
// is sent; the other callers and webhooks are not held up.
import { randomBytes } from "node:crypto";
import { type Client, Code } from "@connectrpc/connect";
import {
  type AutomationService,
  DeliveryState,
  NotifyMode,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
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
import { type InProcessAutomation, startAutomation } from "./in-process.js";

describe("automation service: Redeliver's bounds per member and per webhook", function () {
  this.timeout(90_000);
  let stack: InProcessRunsStack;
  let project: RunsProject;
  let receiver: WebhookReceiver;
  let automation: InProcessAutomation;
  let client: Client<typeof AutomationService>;

  before(async () => {
    stack = await startInProcessRunsStack();
    project = await seedRunsProject(stack, 1000n);
    receiver = await startWebhookReceiver();
    automation = await startAutomation(stack, {
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
      TICK_INTERVAL_MS: "100",
      FOLLOW_INTERVAL_MS: "100",
      WEBHOOK_ALLOW_HTTP: "true",
      EGRESS_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
      REDELIVERIES_PER_MEMBER_PER_MINUTE: "3",
      REDELIVERIES_PER_WEBHOOK_PER_MINUTE: "2",
    });
    client = automation.client;
  });
  after(async () => {
    await automation?.stop();
    await receiver?.close();
    await stack?.stop();
  });

  const as = (role: "admin" | "editor") => member(project.members[role]);

  /** A webhook to the receiver, and its delivery of one finished run once it was delivered. */
  async function deliveredWebhook() {
    const created = await client.createWebhook({
      actor: as("editor"),
      projectId: project.projectId,
      url: receiver.url,
      events: [WebhookEvent.RUN_FINISHED],
      notifyMode: NotifyMode.EVERY_RUN,
    });
    return { id: created.webhook?.id ?? "", secret: created.secret };
  }

  it("refuses a member past their redeliveries a minute, and any caller past a webhook's, with RESOURCE_EXHAUSTED saying when to try again", async () => {
    const first = await deliveredWebhook();
    const second = await deliveredWebhook();
    receiver.setSecrets([first.secret, second.secret]);
    const { run } = await stack.runs.startRun({
      actor: as("editor"),
      projectId: project.projectId,
      selection: { case: "testPlan", value: project.planId },
    });
    const { run: startedRun } = await stack.runs.getRun({
      actor: operator(),
      projectId: project.projectId,
      runId: run?.id ?? "",
    });
    for (const test of startedRun?.tests ?? []) {
      const { assignment } = await stack.executor.claimTest({ testResultId: test.id, executorId: "pod-a/0" });
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 5n,
      });
    }
    const deliveredOf = (webhookId: string) =>
      eventually(
        async () => {
          const { deliveries } = await client.listDeliveries({
            actor: as("editor"),
            projectId: project.projectId,
            webhookId,
          });
          const [delivery] = deliveries;
          return delivery?.state === DeliveryState.DELIVERED ? delivery : undefined;
        },
        "the run's delivery delivered",
        30_000,
      );
    const one = await deliveredOf(first.id);
    const other = await deliveredOf(second.id);
    const redeliver = (role: "admin" | "editor", deliveryId: string) =>
      client.redeliver({ actor: as(role), projectId: project.projectId, deliveryId });
    /** A redelivery let through, and sent: the receiver got it. (A pending one is not sent twice.) */
    const sent = async (role: "admin" | "editor", deliveryId: string) => {
      const before = receiver.received.length;
      expect((await redeliver(role, deliveryId)).delivery?.state).to.equal(DeliveryState.PENDING);
      await eventually(
        async () => (receiver.received.length > before ? true : undefined),
        "the redelivery sent",
        30_000,
      );
    };

    // The first webhook's two, then the webhook's bound: refused for the editor, and for the admin too.
    await sent("editor", one.id);
    await sent("editor", one.id);
    const ofWebhook = await rejects(redeliver("admin", one.id), Code.ResourceExhausted);
    expect(ofWebhook.rawMessage).to.match(
      /this webhook's deliveries were redelivered 2 times within a minute.*try again in \d+ s/,
    );

    // The editor's third redelivery (another webhook) goes; their fourth is refused for them alone.
    await sent("editor", other.id);
    const ofMember = await rejects(redeliver("editor", other.id), Code.ResourceExhausted);
    expect(ofMember.rawMessage).to.match(
      /you redelivered 3 deliveries within a minute, the most one member may; try again in \d+ s/,
    );
    await sent("admin", other.id);

    // Each delivery sent once for the run and once per redelivery let through; the refused sent nothing.
    expect(receiver.received.filter((r) => r.id === one.id)).to.have.length(3);
    expect(receiver.received.filter((r) => r.id === other.id)).to.have.length(3);
  });
});
