// An outsider's review of the automation service (docs/automation.md, docs/security.md): tenancy,
// roles and API keys on every method; a member removed from the organization; redirects, slow and
// huge answers from a receiver; cron expressions that never come; and no webhook secret or badge
// token in any log line of the service. Real catalog, runs, PostgreSQL and local receivers.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Client, Code } from "@connectrpc/connect";
import {
  type AutomationService,
  DeliveryState,
  NotifyMode,
  ScheduleState,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
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
import { type InProcessAutomation, startAutomation } from "./in-process.js";

/** A receiver whose every answer `handle` writes; counts the requests it got. */
async function startServer(handle: (res: import("node:http").ServerResponse) => void) {
  let hits = 0;
  const sockets = new Set<import("node:net").Socket>();
  const server: Server = createServer((req, res) => {
    hits++;
    req.resume();
    req.on("end", () => handle(res));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("automation service under attack", function () {
  this.timeout(120_000);
  let stack: InProcessRunsStack;
  let project: RunsProject;
  let other: RunsProject;
  let replica: InProcessAutomation;
  let automation: Client<typeof AutomationService>;
  /** Every webhook secret and badge token seen: none may be in the service's output. */
  const secrets: string[] = [];
  const timeoutMs = 1_500;

  before(async () => {
    stack = await startInProcessRunsStack();
    const env = {
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
      TICK_INTERVAL_MS: "100",
      FOLLOW_INTERVAL_MS: "100",
      WEBHOOK_RETRY_DELAYS_MS: "60000",
      WEBHOOK_TIMEOUT_MS: String(timeoutMs),
      WEBHOOK_ALLOW_HTTP: "true",
      SCHEDULE_ALLOW_SECONDS: "true",
      EGRESS_ALLOW_CIDRS: "127.0.0.0/8",
      LOG_LEVEL: "debug",
    };
    replica = await startAutomation(stack, env);
    automation = replica.client;
    project = await seedRunsProject(stack, 1000n);
    other = await seedRunsProject(stack, 1000n);
  });
  after(async () => {
    await replica?.stop();
    await stack?.stop();
  });

  const editor = () => member(project.members.editor);
  const planSelection = () => ({ case: "testPlanId" as const, value: project.planId });

  /** One of everything in `project`, made by its editor. */
  async function resources(url: string) {
    const { schedule } = await automation.createSchedule({
      actor: editor(),
      projectId: project.projectId,
      name: "nightly",
      cron: "0 3 * * *",
      environmentId: project.environmentId,
      selection: planSelection(),
      paused: true,
    });
    const created = await automation.createWebhook({
      actor: editor(),
      projectId: project.projectId,
      url,
      events: [WebhookEvent.RUN_FINISHED],
      notifyMode: NotifyMode.EVERY_RUN,
    });
    secrets.push(created.secret);
    const { badge } = await automation.createBadge({
      actor: editor(),
      projectId: project.projectId,
      testPlanId: project.planId,
      environmentId: project.environmentId,
    });
    secrets.push(/\/badges\/([^/]+)\.svg$/.exec(badge?.url ?? "")?.[1] ?? "no token");
    return { scheduleId: schedule?.id ?? "", webhookId: created.webhook?.id ?? "", badgeId: badge?.id ?? "" };
  }

  /** Finishes a run of the plan (every test passed), so every webhook hears of it. */
  async function finishedRun(): Promise<string> {
    const { run } = await stack.runs.startRun({
      actor: editor(),
      projectId: project.projectId,
      selection: { case: "testPlan", value: project.planId },
    });
    for (const test of run?.tests ?? []) {
      const { assignment } = await stack.executor.claimTest({ testResultId: test.id, executorId: "pod-a/0" });
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status: TestStatus.PASSED,
        durationMs: 5n,
      });
    }
    return run?.id ?? "";
  }

  /** Every write and read of automation, for `actor` in `projectId` on the ids given. */
  function everyCall(actor: Actor, projectId: string, ids: Awaited<ReturnType<typeof resources>>) {
    const reads = {
      listSchedules: () => automation.listSchedules({ actor, projectId }),
      getSchedule: () => automation.getSchedule({ actor, projectId, scheduleId: ids.scheduleId }),
      listWebhooks: () => automation.listWebhooks({ actor, projectId }),
      listDeliveries: () => automation.listDeliveries({ actor, projectId, webhookId: ids.webhookId }),
      listBadges: () => automation.listBadges({ actor, projectId }),
    };
    const writes = {
      createSchedule: () =>
        automation.createSchedule({
          actor,
          projectId,
          name: "mine",
          cron: "0 3 * * *",
          environmentId: project.environmentId,
          selection: planSelection(),
          paused: true,
        }),
      updateSchedule: () =>
        automation.updateSchedule({ actor, projectId, scheduleId: ids.scheduleId, paused: false }),
      deleteSchedule: () => automation.deleteSchedule({ actor, projectId, scheduleId: ids.scheduleId }),
      createWebhook: () =>
        automation.createWebhook({
          actor,
          projectId,
          url: "http://127.0.0.1:9/x",
          events: [WebhookEvent.RUN_FAILED],
        }),
      updateWebhook: () =>
        automation.updateWebhook({ actor, projectId, webhookId: ids.webhookId, url: "http://127.0.0.1:9/x" }),
      rotateWebhookSecret: () =>
        automation.rotateWebhookSecret({ actor, projectId, webhookId: ids.webhookId }),
      deleteWebhook: () => automation.deleteWebhook({ actor, projectId, webhookId: ids.webhookId }),
      createBadge: () =>
        automation.createBadge({
          actor,
          projectId,
          testPlanId: project.planId,
          environmentId: project.environmentId,
        }),
      revokeBadge: () => automation.revokeBadge({ actor, projectId, badgeId: ids.badgeId }),
    };
    return { reads, writes };
  }

  it("refuses Viewers every change, API keys everything, and another organization anything of this project", async () => {
    const receiver = await startServer((res) => res.writeHead(200).end("ok"));
    try {
      const ids = await resources(receiver.url);
      const viewer = everyCall(member(project.members.viewer), project.projectId, ids);
      for (const [name, call] of Object.entries(viewer.writes))
        expect((await rejects(call(), Code.PermissionDenied)).code, name).to.equal(Code.PermissionDenied);
      for (const call of Object.values(viewer.reads)) await call();

      const key = everyCall(project.key, project.projectId, ids);
      for (const call of [...Object.values(key.reads), ...Object.values(key.writes)])
        await rejects(call(), Code.PermissionDenied);

      // Another organization's editor naming this project: refused.
      const outsiderHere = everyCall(member(other.members.editor), project.projectId, ids);
      for (const [name, call] of [
        ...Object.entries(outsiderHere.reads),
        ...Object.entries(outsiderHere.writes),
      ]) {
        const code = await call().then(
          () => undefined,
          (error: { code: Code }) => error.code,
        );
        expect(code, name).to.be.oneOf([Code.PermissionDenied, Code.NotFound]);
      }
      // ...and naming its own project with this project's ids: not found there.
      const outsider = everyCall(member(other.members.editor), other.projectId, ids);
      for (const name of [
        "getSchedule",
        "listDeliveries",
        "updateSchedule",
        "deleteSchedule",
        "updateWebhook",
        "rotateWebhookSecret",
        "deleteWebhook",
        "revokeBadge",
      ] as const) {
        const call = { ...outsider.reads, ...outsider.writes }[name];
        await rejects(call(), Code.NotFound);
      }
      const runId = await finishedRun();
      const delivery = await eventually(async () => {
        const { deliveries } = await automation.listDeliveries({
          actor: editor(),
          projectId: project.projectId,
          webhookId: ids.webhookId,
        });
        return deliveries.find((d) => d.runId === runId && d.state === DeliveryState.DELIVERED);
      }, "the run's delivery");
      await rejects(
        automation.redeliver({
          actor: member(other.members.editor),
          projectId: other.projectId,
          deliveryId: delivery.id,
        }),
        Code.NotFound,
      );
      // Everything is still there, untouched.
      const { schedule } = await automation.getSchedule({
        actor: editor(),
        projectId: project.projectId,
        scheduleId: ids.scheduleId,
      });
      expect(schedule?.state).to.equal(ScheduleState.PAUSED);
      expect(
        (await automation.listWebhooks({ actor: editor(), projectId: project.projectId })).webhooks,
      ).to.have.length(1);
      expect(
        (await automation.listBadges({ actor: editor(), projectId: project.projectId })).badges,
      ).to.have.length(1);
      for (const id of [ids.webhookId])
        await automation.deleteWebhook({ actor: editor(), projectId: project.projectId, webhookId: id });
      await automation.deleteSchedule({
        actor: editor(),
        projectId: project.projectId,
        scheduleId: ids.scheduleId,
      });
    } finally {
      await receiver.close();
    }
  });

  it("stops a schedule whose member left the organization, and starts nothing more for them", async () => {
    const leaving = await seedRunsProject(stack, 1000n);
    const { schedule } = await automation.createSchedule({
      actor: member(leaving.members.editor),
      projectId: leaving.projectId,
      name: "leaver's",
      cron: "* * * * * *",
      environmentId: leaving.environmentId,
      selection: { case: "testPlanId", value: leaving.planId },
    });
    const get = () =>
      automation.getSchedule({
        actor: operator(),
        projectId: leaving.projectId,
        scheduleId: schedule?.id ?? "",
      });
    await eventually(
      async () => ((await get()).recentTicks.some((t) => t.runId) ? true : undefined),
      "a run",
    );
    await stack.catalog.catalog.removeMember({ actor: operator(), memberId: leaving.members.editor });
    const stopped = await eventually(async () => {
      const got = await get();
      return got.schedule?.state === ScheduleState.STOPPED ? got : undefined;
    }, "the schedule stopped");
    expect(stopped.schedule?.stoppedReason).to.include(leaving.members.editor);
    // Stopped, it has no next tick: nothing more starts for the member who left.
    expect(stopped.schedule?.nextTicks).to.deep.equal([]);
    expect(stopped.recentTicks.some((t) => t.failure.includes("can no longer start runs"))).to.equal(true);
  });

  it("never follows a receiver's redirect, and bounds a slow or huge answer in time and bytes", async () => {
    const target = await startServer((res) => res.writeHead(200).end("reached"));
    const redirecting = await startServer((res) => res.writeHead(307, { location: target.url }).end());
    // Headers at once, then a body trickling forever.
    const slow = await startServer((res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      const timer = setInterval(() => res.write("x"), 100);
      res.on("close", () => clearInterval(timer));
    });
    // 50 MB of answer.
    const huge = await startServer((res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(1 << 20, "y");
      let left = 50;
      const more = () => {
        while (left > 0) {
          left--;
          if (!res.write(chunk)) return res.once("drain", more);
        }
        res.end();
      };
      more();
    });
    try {
      const hooks = [];
      for (const url of [redirecting.url, slow.url, huge.url]) {
        const created = await automation.createWebhook({
          actor: editor(),
          projectId: project.projectId,
          url,
          events: [WebhookEvent.RUN_FINISHED],
          notifyMode: NotifyMode.EVERY_RUN,
        });
        secrets.push(created.secret);
        hooks.push(created.webhook?.id ?? "");
      }
      const runId = await finishedRun();
      const attempted = async (webhookId: string) =>
        eventually(
          async () => {
            const { deliveries } = await automation.listDeliveries({
              actor: editor(),
              projectId: project.projectId,
              webhookId,
            });
            const found = deliveries.find((d) => d.runId === runId);
            return found && found.attempts > 0 ? found : undefined;
          },
          `an attempt of ${webhookId}`,
          20_000,
        );
      const [redirected, slowly, hugely] = await Promise.all(hooks.map(attempted));
      expect(redirected?.lastResponseCode).to.equal(307);
      expect(redirected?.state).to.equal(DeliveryState.PENDING);
      expect(target.hits()).to.equal(0);
      expect(slowly?.lastError).to.equal(`no answer within ${timeoutMs} ms`);
      expect(hugely?.lastResponseCode).to.equal(500);
      expect(hugely?.lastError.length).to.be.below(300);
      for (const webhookId of hooks)
        await automation.deleteWebhook({ actor: editor(), projectId: project.projectId, webhookId });
    } finally {
      for (const server of [target, redirecting, slow, huge]) await server.close();
    }
  });

  it("refuses a cron expression that never comes", async () => {
    const refused = await rejects(
      automation.createSchedule({
        actor: editor(),
        projectId: project.projectId,
        name: "february 31st",
        cron: "0 0 31 2 *",
        environmentId: project.environmentId,
        selection: planSelection(),
      }),
      Code.InvalidArgument,
    );
    expect(refused.rawMessage).to.match(/^cron: /);
  });

  it("logged no webhook secret and no badge token", () => {
    expect(secrets.length).to.be.greaterThan(3);
    const output = replica.lines().join("\n");
    for (const secret of secrets) {
      expect(output.includes(secret), "a secret in the log").to.equal(false);
      expect(output.includes(secret.replace(/^whsec_/, "")), "a secret's key in the log").to.equal(false);
    }
  });
});
