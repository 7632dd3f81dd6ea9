import { defineEntity, p } from "@mikro-orm/core";

// The automation schema (docs/automation.md). Code reads and writes it in SQL (store.ts and the
// workers), with the database's clock, so replicas agree on what is due.

/** A schedule: a selection run on an environment at the times a cron expression gives. */
export const Schedule = defineEntity({
  name: "Schedule",
  tableName: "schedules",
  properties: {
    id: p.string().primary(),
    projectId: p.string(),
    name: p.text(),
    cron: p.text(),
    timeZone: p.text(),
    environmentId: p.text(),
    /** Exactly one of testPlanId and tags is set. */
    testPlanId: p.text().nullable(),
    tags: p.json<string[]>().nullable(),
    state: p.enum(["active", "paused", "stopped"]),
    stoppedReason: p.text().default(""),
    actsForMemberId: p.text(),
    /** The next tick not yet recorded; null unless active. */
    nextDueAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [
    { name: "schedules_project_index", properties: ["projectId", "name"] },
    // The ticker's claim: active schedules whose next tick is due.
    { name: "schedules_due_index", properties: ["nextDueAt"], where: "state = 'active'" },
  ],
  checks: [
    { name: "schedules_name_length", expression: "char_length(name) between 1 and 100" },
    { name: "schedules_one_selection", expression: "(test_plan_id is null) <> (tags is null)" },
  ],
});

/**
 * One tick of a schedule, recorded once (its primary key): `pending` until its run is started
 * (StartRun with the idempotency key `<schedule id>@<due time>`, so a retry after a crash starts
 * nothing twice), then `started` with the run, or `failed` with why.
 */
export const ScheduleTick = defineEntity({
  name: "ScheduleTick",
  tableName: "schedule_ticks",
  properties: {
    scheduleId: p.string().primary(),
    dueAt: p.datetime().primary(),
    projectId: p.string(),
    state: p.enum(["pending", "started", "failed"]),
    runId: p.text().nullable(),
    failure: p.text().default(""),
    /** Start attempts made (a retry follows an unavailable runs service). */
    attempts: p.integer().default(0),
    /** When a pending tick may be tried (again). */
    retryAt: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ name: "schedule_ticks_pending_index", properties: ["retryAt"], where: "state = 'pending'" }],
});

/**
 * A webhook; its URL and signing secrets are stored sealed (AES-256-GCM under WEBHOOK_SECRETS_KEY,
 * secrets.ts). It acts for a member (actsForMemberId), as a schedule does, and is paused with a
 * reason (pausedReason) when that member can no longer manage webhooks (docs/automation.md).
 */
export const Webhook = defineEntity({
  name: "Webhook",
  tableName: "webhooks",
  properties: {
    id: p.string().primary(),
    projectId: p.string().index(),
    /**
     * The plain URL of rows written before URLs were sealed (or by an older replica during an
     * upgrade): the service seals it into urlSealed and clears it (webhook-urls.ts). Always null
     * once sealed; dropped in a later release.
     */
    url: p.text().nullable(),
    /** The URL, sealed; null only on a row not sealed yet (url set). */
    urlSealed: p.text().nullable(),
    /** The URL's origin (`https://hooks.slack.com`): what readers below EDITOR see. */
    urlOrigin: p.text().default(""),
    kind: p.enum(["standard", "slack"]),
    events: p.json<string[]>(),
    notifyMode: p.enum(["failures_and_recoveries", "every_run"]),
    paused: p.boolean().default(false),
    /** Why the system paused it (its member lost the right, or none is recorded); "" otherwise. */
    pausedReason: p.text().default(""),
    /** The member its deliveries are sent for; null on webhooks made before it was recorded. */
    actsForMemberId: p.text().nullable(),
    /** Who made it: a member, or null (made before creators were recorded). */
    createdByMemberId: p.text().nullable(),
    /** Who last changed it: a member, or an operator by the name it gave; both null until changed. */
    updatedByMemberId: p.text().nullable(),
    updatedByOperator: p.text().nullable(),
    updatedAt: p.datetime().nullable(),
    secretSealed: p.text(),
    previousSecretSealed: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/**
 * One event to one webhook (the outbox): its body fixed when made, so every attempt sends the
 * same bytes under the same webhook-id (the delivery's id).
 */
export const Delivery = defineEntity({
  name: "Delivery",
  tableName: "deliveries",
  properties: {
    id: p.string().primary(),
    webhookId: p.string(),
    projectId: p.string(),
    eventType: p.text(),
    runId: p.text().nullable(),
    body: p.text(),
    state: p.enum(["pending", "delivered", "failed"]),
    attempts: p.integer().default(0),
    lastResponseCode: p.integer().nullable(),
    lastError: p.text().default(""),
    lastAttemptAt: p.datetime().nullable(),
    /** When the next attempt is due (or, while one is made, when its claim lapses). */
    nextAttemptAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [
    { name: "deliveries_webhook_index", properties: ["webhookId", "createdAt", "id"] },
    { name: "deliveries_due_index", properties: ["nextAttemptAt"], where: "state = 'pending'" },
  ],
});

/**
 * Whether a plan (or, for runs of no plan, a run name) passes or fails on an environment: its
 * latest finished run that passed or failed. What plan.state_changed events, quiet mode and badges read.
 */
export const PlanState = defineEntity({
  name: "PlanState",
  tableName: "plan_states",
  properties: {
    projectId: p.string().primary(),
    selectionKey: p.string().primary(),
    environmentId: p.string().primary(),
    state: p.enum(["passing", "failing"]),
    runId: p.text(),
    updatedAt: p.datetime(),
  },
});

/** A status badge: its token is its URL's secret part; revoked badges stay, answering NOT_FOUND. */
export const Badge = defineEntity({
  name: "Badge",
  tableName: "badges",
  properties: {
    id: p.string().primary(),
    projectId: p.string().index(),
    testPlanId: p.text(),
    environmentId: p.text(),
    token: p.string().unique(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** Where the run follower stands in ListFinishedRuns: one row. */
export const RunCursor = defineEntity({
  name: "RunCursor",
  tableName: "run_cursor",
  properties: {
    id: p.integer().primary(),
    cursor: p.text(),
    /** ListQuarantineEvents' cursor (the webhooks' quarantine events). */
    quarantineCursor: p.text().default(""),
  },
});

export const entities = [Schedule, ScheduleTick, Webhook, Delivery, PlanState, Badge, RunCursor];
