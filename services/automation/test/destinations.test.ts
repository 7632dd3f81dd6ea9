// Webhook destinations in every range the egress guard refuses by default (docs/automation.md,
// "Egress"; the ranges: docs/security.md, "Executor egress"), each range its own test: refused when
// saved, by address (an IPv4 one in its IPv6 forms and the other spellings a URL parser reads too)
// and by a name resolving to it, and refused when delivered to a name that resolved elsewhere when
// the webhook was saved. Real automation, catalog and runs services in-process, real PostgreSQL.
import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { type Client, Code } from "@connectrpc/connect";
import {
  type AutomationService,
  DeliveryState,
  NotifyMode,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { defaultBlockedRanges, type Resolve } from "@testrun/kit/egress";
import {
  blockedSamples,
  eventually,
  type InProcessRunsStack,
  ipv4Spellings,
  ipv6FormsOf,
  leaseOf,
  member,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
  urlHost,
} from "@testrun/testing";
import { expect } from "chai";
import { type InProcessAutomation, startAutomation } from "./in-process.js";

const refused = "goes to an address webhooks may not reach";
/** A public address: where every host name resolves while the webhooks are saved. */
const publicAddress = "8.8.8.8";

describe("automation service: webhook destinations in every default blocked range", function () {
  // Two projects' runs delivered to forty webhooks, each attempt refused, on a busy machine.
  this.timeout(60_000);
  let stack: InProcessRunsStack;
  let automation: InProcessAutomation;
  let client: Client<typeof AutomationService>;
  /** Host name -> the address it resolves to now; IP literals resolve to themselves. */
  const answers = new Map<string, string>();
  const resolve: Resolve = async (hostname) => {
    const address = isIP(hostname) ? hostname : (answers.get(hostname) ?? publicAddress);
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
  /** Per range: the webhook saved to a name that resolves into the range once the run finished. */
  const delivered = new Map<string, { project: RunsProject; webhookId: string }>();

  const editorOf = (project: RunsProject) => member(project.members.editor);
  const createWebhook = (project: RunsProject, url: string) =>
    client.createWebhook({
      actor: editorOf(project),
      projectId: project.projectId,
      url,
      events: [WebhookEvent.RUN_FINISHED],
      notifyMode: NotifyMode.EVERY_RUN,
    });

  /** Starts a run of the project's plan and passes every test of it. */
  async function finishRun(project: RunsProject) {
    const { run } = await stack.runs.startRun({
      actor: editorOf(project),
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
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status: TestStatus.PASSED,
        summary: "",
        durationMs: 5n,
      });
    }
  }

  before(async () => {
    stack = await startInProcessRunsStack();
    automation = await startAutomation(
      stack,
      {
        WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
        TICK_INTERVAL_MS: "100",
        FOLLOW_INTERVAL_MS: "100",
        WEBHOOK_RETRY_DELAYS_MS: "200,200,200",
        WEBHOOK_TIMEOUT_MS: "2000",
        // The production default: no exception to the blocks.
        EGRESS_ALLOW_CIDRS: "",
      },
      undefined,
      resolve,
    );
    client = automation.client;
    // A project holds at most 20 webhooks: one project for each 20 ranges.
    const projects: RunsProject[] = [];
    for (const [index, { cidr }] of defaultBlockedRanges.entries()) {
      if (index % 20 === 0) projects.push(await seedRunsProject(stack, 100n));
      const project = projects.at(-1) as RunsProject;
      const host = `delivery-${index}.hooks.example.test`;
      const { webhook } = await createWebhook(project, `https://${host}/hook`);
      delivered.set(cidr, { project, webhookId: webhook?.id ?? "" });
      answers.set(host, blockedSamples[cidr]?.[0] ?? "");
    }
    for (const project of projects) await finishRun(project);
  });
  after(async () => {
    await automation?.stop();
    await stack?.stop();
  });

  for (const [rangeIndex, { cidr }] of defaultBlockedRanges.entries()) {
    const ipv4 = !cidr.includes(":");
    it(`refuses ${cidr} when a webhook is saved, by address${ipv4 ? " in every spelling" : ""} and by name, and when it is delivered`, async () => {
      const { project, webhookId } = delivered.get(cidr) ?? { project: undefined, webhookId: "" };
      if (!project) throw new Error(`no webhook was saved for ${cidr}`);
      for (const [index, address] of (blockedSamples[cidr] ?? []).entries()) {
        const hosts =
          index === 0 && ipv4
            ? [address, ...ipv6FormsOf(address).map(urlHost), ...ipv4Spellings(address)]
            : [urlHost(address)];
        const name = `save-${rangeIndex}-${index}.hooks.example.test`;
        answers.set(name, address);
        for (const host of [...hosts, name]) {
          const refusal = await rejects(createWebhook(project, `https://${host}/hook`), Code.InvalidArgument);
          expect(refusal.rawMessage, host).to.contain(refused);
        }
      }
      const delivery = await eventually(
        async () => {
          const { deliveries } = await client.listDeliveries({
            actor: editorOf(project),
            projectId: project.projectId,
            webhookId,
          });
          return deliveries[0] && deliveries[0].attempts >= 1 ? deliveries[0] : undefined;
        },
        `the delivery for ${cidr} attempted`,
        30_000,
      );
      expect(delivery.lastError).to.equal(
        `refused: the URL ${refused} (loopback, link-local or metadata, a special-purpose range, or the cluster)`,
      );
      expect(delivery.lastResponseCode).to.equal(undefined);
      expect(delivery.state).to.be.oneOf([DeliveryState.PENDING, DeliveryState.FAILED]);
    });
  }
});
