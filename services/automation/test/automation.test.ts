import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { type Client, Code } from "@connectrpc/connect";
import {
  type AutomationService,
  BadgeState,
  NotifyMode,
  ScheduleState,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { TagListSchema } from "@testrun/gen/testrun/common/v1/selection_pb";
import { type Run, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
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
import { Webhook as StandardWebhook } from "standardwebhooks";
import { sign } from "../src/secrets.js";
import { type InProcessAutomation, startAutomation } from "./in-process.js";

interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

/** A local receiver: answers what `answer` says, records every request. */
async function startReceiver() {
  const received: Received[] = [];
  let answer = 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(answer).end(answer === 200 ? "ok" : "broken");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    answerWith: (status: number) => {
      answer = status;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("automation service: schedules, webhooks, badges against real catalog, runs, PostgreSQL", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  let replicas: InProcessAutomation[] = [];
  let automation: Client<typeof AutomationService>;

  before(async () => {
    stack = await startInProcessRunsStack();
    const env = {
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
      TICK_INTERVAL_MS: "100",
      FOLLOW_INTERVAL_MS: "100",
      WEBHOOK_RETRY_DELAYS_MS: "200,200,200",
      WEBHOOK_TIMEOUT_MS: "1000",
      WEBHOOK_ALLOW_HTTP: "true",
      SCHEDULE_ALLOW_SECONDS: "true",
      EGRESS_ALLOW_CIDRS: "127.0.0.0/8",
      SLACK_WEBHOOK_HOSTS: "127.0.0.1",
    };
    // Two replicas at once: ticks and deliveries are claimed in PostgreSQL.
    const first = await startAutomation(stack, env);
    replicas = [first, await startAutomation(stack, env, first.databaseUrl)];
    automation = first.client;
  });
  beforeEach(async () => {
    project = await seedRunsProject(stack, 1000n);
  });
  after(async () => {
    for (const replica of replicas) await replica.stop();
    await stack?.stop();
  });

  const editor = () => member(project.members.editor);
  const planSelection = () => ({ case: "testPlanId" as const, value: project.planId });

  /** Executes every test of a run with one status. */
  async function finish(runId: string, status: TestStatus): Promise<void> {
    const { run } = await stack.runs.getRun({ actor: operator(), projectId: project.projectId, runId });
    for (const test of run?.tests ?? []) {
      const { assignment } = await stack.executor.claimTest({ testResultId: test.id, executorId: "pod-a/0" });
      await stack.executor.completeTest({
        ...leaseOf(assignment),
        status,
        summary: status === TestStatus.FAILED ? "expected 200, got 500" : "",
        durationMs: 5n,
      });
    }
  }
  const startPlanRun = async (): Promise<Run> =>
    (
      await stack.runs.startRun({
        actor: editor(),
        projectId: project.projectId,
        selection: { case: "testPlan", value: project.planId },
      })
    ).run as Run;

  it("creates, lists, changes and deletes schedules; viewers read only; bounds and bad cron are clear", async () => {
    const { schedule } = await automation.createSchedule({
      actor: editor(),
      projectId: project.projectId,
      name: "hourly",
      cron: "0 * * * *",
      timeZone: "Europe/Berlin",
      environmentId: project.environmentId,
      selection: planSelection(),
      paused: true,
    });
    expect(schedule?.state).to.equal(ScheduleState.PAUSED);
    expect(schedule?.actsForMemberId).to.equal(project.members.editor);
    const viewer = member(project.members.viewer);
    expect(
      (await automation.listSchedules({ actor: viewer, projectId: project.projectId })).schedules,
    ).to.have.length(1);
    await rejects(
      automation.deleteSchedule({
        actor: viewer,
        projectId: project.projectId,
        scheduleId: schedule?.id ?? "",
      }),
      Code.PermissionDenied,
    );
    const bad = await rejects(
      automation.createSchedule({
        actor: editor(),
        projectId: project.projectId,
        name: "x",
        cron: "61 * * * *",
        timeZone: "Mars/Base",
        environmentId: project.environmentId,
        selection: planSelection(),
      }),
      Code.InvalidArgument,
    );
    expect(bad.message).to.match(/time_zone|cron/);
    const active = await automation.updateSchedule({
      actor: editor(),
      projectId: project.projectId,
      scheduleId: schedule?.id ?? "",
      paused: false,
    });
    expect(active.schedule?.nextTicks).to.have.length(3);
    // Another member changing what it runs becomes the member it acts for; a rename does not.
    const renamed = await automation.updateSchedule({
      actor: member(project.members.admin),
      projectId: project.projectId,
      scheduleId: schedule?.id ?? "",
      name: "Hourly smoke, renamed",
    });
    expect(renamed.schedule?.actsForMemberId).to.equal(project.members.editor);
    const retargeted = await automation.updateSchedule({
      actor: member(project.members.admin),
      projectId: project.projectId,
      scheduleId: schedule?.id ?? "",
      selection: { case: "tags", value: create(TagListSchema, { tags: ["smoke"] }) },
    });
    expect(retargeted.schedule?.actsForMemberId).to.equal(project.members.admin);
    const preview = await automation.previewSchedule({
      actor: viewer,
      projectId: project.projectId,
      cron: "0 9 * * 1",
      timeZone: "America/New_York",
    });
    expect(preview.nextTicks).to.have.length(3);
    // Another project's schedule is NOT_FOUND there.
    const other = await seedRunsProject(stack, 0n);
    await rejects(
      automation.getSchedule({
        actor: member(other.members.editor),
        projectId: other.projectId,
        scheduleId: schedule?.id ?? "",
      }),
      Code.NotFound,
    );
    await automation.deleteSchedule({
      actor: editor(),
      projectId: project.projectId,
      scheduleId: schedule?.id ?? "",
    });
    await rejects(
      automation.getSchedule({
        actor: editor(),
        projectId: project.projectId,
        scheduleId: schedule?.id ?? "",
      }),
      Code.NotFound,
    );
    for (let i = 0; i < 50; i++)
      await automation.createSchedule({
        actor: editor(),
        projectId: project.projectId,
        name: `s${i}`,
        cron: "0 0 * * *",
        environmentId: project.environmentId,
        selection: planSelection(),
        paused: true,
      });
    await rejects(
      automation.createSchedule({
        actor: editor(),
        projectId: project.projectId,
        name: "one too many",
        cron: "0 0 * * *",
        environmentId: project.environmentId,
        selection: planSelection(),
        paused: true,
      }),
      Code.ResourceExhausted,
    );
  });

  it("two replicas start each tick of an every-second schedule exactly once, named for the schedule", async () => {
    const { schedule } = await automation.createSchedule({
      actor: editor(),
      projectId: project.projectId,
      name: "every second",
      cron: "* * * * * *",
      environmentId: project.environmentId,
      selection: planSelection(),
    });
    const ticks = await eventually(async () => {
      const got = await automation.getSchedule({
        actor: editor(),
        projectId: project.projectId,
        scheduleId: schedule?.id ?? "",
      });
      const started = got.recentTicks.filter((t) => t.runId);
      return started.length >= 3 ? started : undefined;
    }, "three started ticks");
    await automation.updateSchedule({
      actor: editor(),
      projectId: project.projectId,
      scheduleId: schedule?.id ?? "",
      paused: true,
    });
    const runIds = ticks.map((t) => t.runId);
    expect(new Set(runIds).size).to.equal(runIds.length);
    const { runs } = await stack.runs.listRuns({
      actor: operator(),
      projectId: project.projectId,
      limit: 100,
    });
    const scheduled = runs.filter((r) => r.name === "every second (scheduled)");
    // Every run of the schedule belongs to exactly one tick (no tick started two).
    const { recentTicks } = await automation.getSchedule({
      actor: editor(),
      projectId: project.projectId,
      scheduleId: schedule?.id ?? "",
    });
    expect(scheduled.map((r) => r.id).sort()).to.deep.equal(
      recentTicks.flatMap((t) => (t.runId ? [t.runId] : [])).sort(),
    );
  });

  it("records a tick without credits with its reason, and stops the schedule when its member is demoted", async () => {
    const poor = await seedRunsProject(stack, 0n);
    const { schedule } = await automation.createSchedule({
      actor: member(poor.members.editor),
      projectId: poor.projectId,
      name: "poor",
      cron: "* * * * * *",
      environmentId: poor.environmentId,
      selection: { case: "testPlanId", value: poor.planId },
    });
    const failed = await eventually(async () => {
      const got = await automation.getSchedule({
        actor: member(poor.members.editor),
        projectId: poor.projectId,
        scheduleId: schedule?.id ?? "",
      });
      return got.recentTicks.find((t) => t.failure);
    }, "a failed tick");
    expect(failed.failure).to.match(/credits/);
    expect(failed.runId).to.equal(undefined);
    await stack.catalog.catalog.changeMemberRole({
      actor: operator(),
      memberId: poor.members.editor,
      role: Role.VIEWER,
    });
    const stopped = await eventually(async () => {
      const got = await automation.getSchedule({
        actor: operator(),
        projectId: poor.projectId,
        scheduleId: schedule?.id ?? "",
      });
      return got.schedule?.state === ScheduleState.STOPPED ? got.schedule : undefined;
    }, "the schedule stopped");
    expect(stopped.stoppedReason).to.include(poor.members.editor);
  });

  it("delivers signed events a standard verifier accepts, retries 500s with the same webhook-id, stays quiet on passes", async () => {
    const receiver = await startReceiver();
    try {
      const created = await automation.createWebhook({
        actor: editor(),
        projectId: project.projectId,
        url: receiver.url,
        events: [WebhookEvent.RUN_FINISHED, WebhookEvent.RUN_FAILED, WebhookEvent.PLAN_STATE_CHANGED],
        notifyMode: NotifyMode.FAILURES_AND_RECOVERIES,
      });
      expect(created.secret).to.match(/^whsec_[A-Za-z0-9+/]{32}$/);
      receiver.answerWith(500);
      const passed = await startPlanRun();
      await finish(passed.id, TestStatus.PASSED);
      const failed = await startPlanRun();
      await finish(failed.id, TestStatus.FAILED);
      // 500s first: retried, then delivered once the receiver recovers.
      await eventually(
        async () =>
          new Set(receiver.received.map((r) => r.headers["webhook-id"])).size >= 3 ? true : undefined,
        "each of the three deliveries answered 500 once",
      );
      receiver.answerWith(200);
      const webhookId = created.webhook?.id ?? "";
      const delivered = await eventually(async () => {
        const { deliveries } = await automation.listDeliveries({
          actor: editor(),
          projectId: project.projectId,
          webhookId,
        });
        return deliveries.length === 3 && deliveries.every((d) => d.lastResponseCode === 200)
          ? deliveries
          : undefined;
      }, "every delivery delivered once the receiver recovered");
      expect(delivered.every((d) => d.attempts >= 2)).to.equal(true);
      const verifier = new StandardWebhook(created.secret.replace(/^whsec_/, ""));
      const events = await eventually(async () => {
        const ok = receiver.received.map(
          (r) =>
            verifier.verify(r.body, r.headers as Record<string, string>) as {
              type: string;
              data: { run: { id: string } };
            },
        );
        const types = new Set(ok.map((e) => `${e.type}:${e.data.run.id}`));
        return types.size >= 3 ? types : undefined;
      }, "signed events of the failed run");
      // Quiet: the first pass is not told; the failure is (finished, failed, and passing → failing).
      expect([...events].sort()).to.deep.equal([
        `plan.state_changed:${failed.id}`,
        `run.failed:${failed.id}`,
        `run.finished:${failed.id}`,
      ]);
      // Attempts after 500s carry the same webhook-id: three deliveries, more requests.
      const ids = receiver.received.map((r) => r.headers["webhook-id"]);
      expect(new Set(ids).size).to.equal(3);
      expect(ids.length).to.be.at.least(6);
      // The recovery: the next pass is told, with the state change.
      const recovered = await startPlanRun();
      await finish(recovered.id, TestStatus.PASSED);
      await eventually(async () => {
        const types = receiver.received.map(
          (r) => JSON.parse(r.body) as { type: string; data: { run: { id: string } } },
        );
        return types.some((t) => t.type === "plan.state_changed" && t.data.run.id === recovered.id)
          ? true
          : undefined;
      }, "the recovery's plan.state_changed");
      // Rotation: both secrets sign.
      const rotated = await automation.rotateWebhookSecret({
        actor: editor(),
        projectId: project.projectId,
        webhookId: created.webhook?.id ?? "",
      });
      const seen = receiver.received.length;
      const again = await startPlanRun();
      await finish(again.id, TestStatus.FAILED);
      const next = await eventually(async () => receiver.received[seen], "a delivery after rotation");
      for (const secret of [created.secret, rotated.secret])
        new StandardWebhook(secret.replace(/^whsec_/, "")).verify(
          next.body,
          next.headers as Record<string, string>,
        );
      expect(String(next.headers["webhook-signature"]).split(" ")).to.have.length(2);
    } finally {
      await receiver.close();
    }
  });

  it("tells a case's quarantine, its lift and its expiry to the webhooks that asked, signed, with the case and the reason", async () => {
    const receiver = await startReceiver();
    try {
      const created = await automation.createWebhook({
        actor: editor(),
        projectId: project.projectId,
        url: receiver.url,
        events: [
          WebhookEvent.TEST_CASE_QUARANTINED,
          WebhookEvent.TEST_CASE_QUARANTINE_LIFTED,
          WebhookEvent.TEST_CASE_QUARANTINE_EXPIRED,
        ],
        notifyMode: NotifyMode.EVERY_RUN,
      });
      const testCaseId = project.cases[0] ?? "";
      const quarantine = (reason: string) =>
        stack.runs.quarantineTestCase({ actor: editor(), projectId: project.projectId, testCaseId, reason });
      await quarantine("flaky login (JIRA-7)");
      await stack.runs.liftQuarantine({ actor: editor(), projectId: project.projectId, testCaseId });
      await quarantine("again");
      // Its expiry, as the runs service's reconciler would find it.
      await stack.db.query(
        "update runs.quarantines set expires_at = now() - interval '1 second' where test_case_id = $1 and ended_at is null",
        [testCaseId],
      );
      await stack.runs.quarantineTestCase({
        actor: editor(),
        projectId: project.projectId,
        testCaseId: project.cases[1] ?? "",
        reason: "x",
      });
      const verifier = new StandardWebhook(created.secret.replace(/^whsec_/, ""));
      type Told = {
        type: string;
        data: {
          quarantine: {
            testCase: { id: string; url: string };
            reason: string;
            liftedByMemberId: string | null;
          };
        };
      };
      const told = await eventually(async () => {
        const events = receiver.received.map(
          (r) => verifier.verify(r.body, r.headers as Record<string, string>) as Told,
        );
        const mine = events.filter((e) => e.data.quarantine.testCase.id === testCaseId);
        return mine.length >= 4 ? mine : undefined;
      }, "four quarantine events of the case");
      expect(told.map((e) => e.type)).to.have.members([
        "test_case.quarantined",
        "test_case.quarantine_lifted",
        "test_case.quarantined",
        "test_case.quarantine_expired",
      ]);
      const lifted = told.find((e) => e.type === "test_case.quarantine_lifted");
      expect(lifted?.data.quarantine.reason).to.equal("flaky login (JIRA-7)");
      expect(lifted?.data.quarantine.liftedByMemberId).to.equal(project.members.editor);
      expect(lifted?.data.quarantine.testCase.url).to.match(
        new RegExp(`/projects/${project.projectId}/test-cases/${testCaseId}$`),
      );
    } finally {
      await receiver.close();
    }
  });

  it("tells a run's new failures and the failure group it opened, signed, once per group", async () => {
    const receiver = await startReceiver();
    try {
      const created = await automation.createWebhook({
        actor: editor(),
        projectId: project.projectId,
        url: receiver.url,
        events: [WebhookEvent.RUN_NEW_FAILURES, WebhookEvent.FAILURE_GROUP_OPENED],
        notifyMode: NotifyMode.EVERY_RUN,
      });
      const green = await startPlanRun();
      await finish(green.id, TestStatus.PASSED);
      // The plan's next run fails every test the same way: new against the green base, one group.
      const red = await startPlanRun();
      await finish(red.id, TestStatus.FAILED);
      const verifier = new StandardWebhook(created.secret.replace(/^whsec_/, ""));
      type Told = {
        type: string;
        data: {
          run: { id: string; newFailures: number };
          failureGroup?: { id: string; casesAffected: number };
        };
      };
      const told = await eventually(async () => {
        const events = receiver.received.map(
          (r) => verifier.verify(r.body, r.headers as Record<string, string>) as Told,
        );
        return events.length >= 2 ? events : undefined;
      }, "the new failures and the opened group");
      expect(told.map((e) => e.type).sort()).to.deep.equal(["failure_group.opened", "run.new_failures"]);
      expect(told.every((e) => e.data.run.id === red.id)).to.equal(true);
      expect(told.find((e) => e.type === "run.new_failures")?.data.run.newFailures).to.equal(red.totalTests);
      expect(told.find((e) => e.type === "failure_group.opened")?.data.failureGroup?.casesAffected).to.equal(
        red.totalTests,
      );
    } finally {
      await receiver.close();
    }
  });

  it("refuses loopback and metadata endpoints without an allowance, and Slack URLs not Slack's", async () => {
    for (const url of ["https://169.254.169.254/latest", "https://[::1]/hook", "ftp://example.com/"])
      await rejects(
        automation.createWebhook({
          actor: editor(),
          projectId: project.projectId,
          url,
          events: [WebhookEvent.RUN_FAILED],
        }),
        Code.InvalidArgument,
      );
  });

  it("shows a badge's state: unknown, passing, failing, and NOT_FOUND once revoked", async () => {
    const { badge } = await automation.createBadge({
      actor: editor(),
      projectId: project.projectId,
      testPlanId: project.planId,
      environmentId: project.environmentId,
    });
    const token = /\/badges\/([A-Za-z0-9_-]+)\.svg$/.exec(badge?.url ?? "")?.[1] ?? "";
    expect(token.length).to.be.at.least(22);
    expect((await automation.getBadgeState({ token })).state).to.equal(BadgeState.UNKNOWN);
    const passed = await startPlanRun();
    await finish(passed.id, TestStatus.PASSED);
    await eventually(
      async () =>
        (await automation.getBadgeState({ token })).state === BadgeState.PASSING ? true : undefined,
      "passing",
    );
    const failed = await startPlanRun();
    await finish(failed.id, TestStatus.FAILED);
    await eventually(
      async () =>
        (await automation.getBadgeState({ token })).state === BadgeState.FAILING ? true : undefined,
      "failing",
    );
    await automation.revokeBadge({ actor: editor(), projectId: project.projectId, badgeId: badge?.id ?? "" });
    await rejects(automation.getBadgeState({ token }), Code.NotFound);
  });

  it("signs as docs/automation.md's test vector says", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const body = '{"type":"run.failed","timestamp":"2026-01-01T00:00:00.000Z","data":{"event":"run.failed"}}';
    expect(sign(secret, "dlv_01jd3k0000000000000000000", 1767225600, body)).to.equal(
      "v1,AgvI2DXungifGpurtqeeEMjftFHR0BgwsVRTwWiyLyI=",
    );
    expect(sign(secret, "dlv_01jd3k0000000000000000000", 1767225600, body)).to.equal(
      new StandardWebhook("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").sign(
        "dlv_01jd3k0000000000000000000",
        new Date(1767225600 * 1000),
        body,
      ),
    );
  });
});
