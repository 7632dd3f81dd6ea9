// Schedules, webhooks and deliveries in words (docs/console.md, "Schedules", "Webhooks").
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  DeliveryState,
  NotifyMode,
  type Schedule,
  ScheduleState,
  WebhookEvent,
  WebhookKind,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { dateOf, type Tone } from "./format";

export const scheduleStateName: Record<ScheduleState, string> = {
  [ScheduleState.UNSPECIFIED]: "Unknown",
  [ScheduleState.ACTIVE]: "Active",
  [ScheduleState.PAUSED]: "Paused",
  [ScheduleState.STOPPED]: "Stopped",
};

export const scheduleStateTone: Record<ScheduleState, Tone> = {
  [ScheduleState.UNSPECIFIED]: "neutral",
  [ScheduleState.ACTIVE]: "good",
  [ScheduleState.PAUSED]: "neutral",
  [ScheduleState.STOPPED]: "bad",
};

/** The events a webhook may want, in the order the form offers them. */
export const webhookEvents = [
  { event: WebhookEvent.RUN_FAILED, name: "Run failed", type: "run.failed" },
  { event: WebhookEvent.RUN_FINISHED, name: "Run finished", type: "run.finished" },
  { event: WebhookEvent.PLAN_STATE_CHANGED, name: "Plan state changed", type: "plan.state_changed" },
  {
    event: WebhookEvent.SCHEDULE_TICK_FAILED,
    name: "Scheduled run could not start",
    type: "schedule.tick_failed",
  },
  { event: WebhookEvent.TEST_CASE_QUARANTINED, name: "Test case quarantined", type: "test_case.quarantined" },
  {
    event: WebhookEvent.TEST_CASE_QUARANTINE_LIFTED,
    name: "Quarantine lifted",
    type: "test_case.quarantine_lifted",
  },
  {
    event: WebhookEvent.TEST_CASE_QUARANTINE_EXPIRED,
    name: "Quarantine expired",
    type: "test_case.quarantine_expired",
  },
  { event: WebhookEvent.RUN_NEW_FAILURES, name: "Run has new failures", type: "run.new_failures" },
  { event: WebhookEvent.FAILURE_GROUP_OPENED, name: "New failure group", type: "failure_group.opened" },
] as const;

export const webhookEventName = (event: WebhookEvent) =>
  webhookEvents.find((e) => e.event === event)?.name ?? "Unknown event";

export const webhookKindName = (kind: WebhookKind) => (kind === WebhookKind.SLACK ? "Slack" : "Standard");

export const notifyModeName = (mode: NotifyMode) =>
  mode === NotifyMode.EVERY_RUN ? "Every run" : "Failures and recoveries";

export const deliveryStateName: Record<DeliveryState, string> = {
  [DeliveryState.UNSPECIFIED]: "Unknown",
  [DeliveryState.PENDING]: "Pending",
  [DeliveryState.DELIVERED]: "Delivered",
  [DeliveryState.FAILED]: "Failed",
};

export const deliveryStateTone: Record<DeliveryState, Tone> = {
  [DeliveryState.UNSPECIFIED]: "neutral",
  [DeliveryState.PENDING]: "waiting",
  [DeliveryState.DELIVERED]: "good",
  [DeliveryState.FAILED]: "bad",
};

/** What a schedule runs, in words: the plan's name (or its id while names load) or its tags. */
export function scheduleWhat(schedule: Schedule, planNames: ReadonlyMap<string, string>): string {
  const { selection } = schedule;
  if (selection.case === "testPlanId") return planNames.get(selection.value) ?? selection.value;
  if (selection.case === "tags") return `Tags: ${selection.value.tags.join(", ")}`;
  return "—";
}

/** A few common cron expressions in words; anything else is shown as typed. */
const cronWords: Record<string, string> = {
  "* * * * *": "every minute",
  "0 * * * *": "every hour",
  "0 0 * * *": "every day at midnight",
  "0 0 * * 0": "every Sunday at midnight",
  "0 0 1 * *": "on the first of each month at midnight",
};

export const cronInWords = (cron: string): string | undefined => cronWords[cron.trim().replace(/\s+/g, " ")];

/**
 * A tick's time as a person reads it in the schedule's own zone ("Mon, 3 Mar, 14:00 Europe/Berlin"),
 * or in the browser's zone when the zone is not one the browser knows.
 */
export function tickTime(at: Timestamp | undefined, timeZone: string): string {
  const date = dateOf(at);
  if (!date) return "—";
  const options: Intl.DateTimeFormatOptions = {
    weekday: "short",
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
  };
  try {
    return new Intl.DateTimeFormat("en", { ...options, timeZone: timeZone || "UTC" }).format(date);
  } catch {
    return new Intl.DateTimeFormat("en", options).format(date);
  }
}

/** Every IANA zone the browser knows, for the time zone field's suggestions. */
export const knownTimeZones = (): string[] => {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return ["UTC"];
  }
};
