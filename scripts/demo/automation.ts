// `make run`'s automation (docs/automation.md, issue's "done when"): a schedule starting the Smoke
// plan every minute on the demo target, a webhook to the local receiver `make run` starts
// (scripts/webhook-receiver.ts, which checks each event's signature), and a status badge of Smoke
// on the local environment. All made as the demo owner, as a member would in the console.
import {
  AutomationService,
  NotifyMode,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { serviceClient } from "@testrun/kit";
import type { Demo } from "./seed.js";

export interface DemoAutomation {
  scheduleId: string;
  webhookId: string;
  /** The webhook's signing secret (shown once, as the console does). */
  webhookSecret: string;
  badgeUrl: string;
}

export async function seedDemoAutomation(
  env: Record<string, string>,
  demo: Demo,
  receiverUrl: string,
): Promise<DemoAutomation> {
  const automation = serviceClient(AutomationService, env.AUTOMATION_URL ?? "", {
    token: env.SERVICE_TOKEN ?? "",
    timeoutMs: 30_000,
  });
  const actor = { kind: { case: "memberId" as const, value: demo.ownerMemberId } };
  const projectId = demo.projectId;
  const { schedule } = await automation.createSchedule({
    actor,
    projectId,
    name: "Smoke every minute",
    cron: "* * * * *",
    timeZone: "UTC",
    environmentId: demo.localEnvironmentId,
    selection: { case: "testPlanId", value: demo.smokePlanId },
    paused: false,
  });
  // Every event of every run: the demo shows each one arriving, signed.
  const { webhook, secret } = await automation.createWebhook({
    actor,
    projectId,
    url: receiverUrl,
    events: [
      WebhookEvent.RUN_FINISHED,
      WebhookEvent.RUN_FAILED,
      WebhookEvent.PLAN_STATE_CHANGED,
      WebhookEvent.SCHEDULE_TICK_FAILED,
    ],
    notifyMode: NotifyMode.EVERY_RUN,
  });
  const { badge } = await automation.createBadge({
    actor,
    projectId,
    testPlanId: demo.smokePlanId,
    environmentId: demo.localEnvironmentId,
  });
  return {
    scheduleId: schedule?.id ?? "",
    webhookId: webhook?.id ?? "",
    webhookSecret: secret,
    badgeUrl: badge?.url ?? "",
  };
}
