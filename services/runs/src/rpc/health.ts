// Test health's methods (docs/rest-api.md, "Test health and quarantine"): a case's history, the
// project's health list, quarantines and the settings. The store is health/store.ts.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import {
  HealthSettingsSchema,
  HealthState,
  QuarantineEventSchema,
  QuarantineEventType,
} from "@testrun/gen/testrun/runs/v1/health_pb";
import { HistoryEntrySchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { callerIdentity, dbDate, requireActor } from "@testrun/kit";
import { failureCauses } from "../causes.js";
import type { ServiceDeps } from "../deps.js";
import { invalid } from "../errors.js";
import { renderCaseHealth, renderQuarantine } from "../health/render.js";
import type { HealthSettingsRow, ListedState } from "../health/store.js";
import { testStatuses } from "../render.js";
import type { QuarantineRow } from "../rows.js";
import { decodePageToken, encodePageToken } from "../store/reads.js";
import { authorize, type Handlers } from "./context.js";
import { decodeOffset, encodeOffset, pageSize } from "./paging.js";

/** GetTestCaseHistory's largest page, and its default. */
const maxHistory = 100;
const defaultHistory = 50;
/** ListTestHealth's largest page, its default, and its most test cases to filter by. */
const maxHealthPage = 500;
const defaultHealthPage = 100;
const maxFilterCases = 2_000;
/** A quarantine's reason and length. */
const maxReason = 300;
const defaultDays = 14;
const maxDays = 90;
/** ListQuarantineEvents' largest page and default. */
const maxEvents = 100;
const defaultEvents = 50;

const listedStates: Partial<Record<HealthState, ListedState>> = {
  [HealthState.UNKNOWN]: "unknown",
  [HealthState.STABLE]: "stable",
  [HealthState.FLAKY]: "flaky",
  [HealthState.FAILING]: "failing",
  [HealthState.NEW_FAILURE]: "new_failure",
  [HealthState.QUARANTINED]: "quarantined",
};
const stateNumbers = Object.fromEntries(
  Object.entries(listedStates).map(([n, s]) => [s, Number(n)]),
) as Record<ListedState, number>;

const eventTypes: Record<string, QuarantineEventType> = {
  started: QuarantineEventType.STARTED,
  lifted: QuarantineEventType.LIFTED,
  expired: QuarantineEventType.EXPIRED,
};

/** A schedule's runs carry `<schedule id>@<due time>` as their idempotency key (the automation service). */
const scheduleOf = (idempotencyKey: string | null) => {
  const id = idempotencyKey?.split("@")[0];
  return id?.startsWith("sch_") ? id : undefined;
};

/** Only members (EDITOR or above) and operators change quarantines: a key never does (decisions). */
async function requireQuarantiner(deps: ServiceDeps, actor: Actor | undefined, projectId: string) {
  const kind = requireActor(actor);
  if (kind === "apiKey")
    throw new ConnectError("API keys cannot quarantine test cases", Code.PermissionDenied);
  await authorize(deps, actor, projectId, Permission.EDIT);
  return actor?.kind.case === "memberId" ? actor.kind.value : null;
}

function checkSettings(s: HealthSettingsRow): HealthSettingsRow {
  const within = (value: number, low: number, high: number, name: string) => {
    if (!Number.isInteger(value) || value < low || value > high)
      throw invalid(`${name} must be ${low} to ${high}`);
  };
  within(s.window_results, 5, 200, "window_results");
  within(s.window_days, 1, 90, "window_days");
  within(s.min_results, 2, 50, "min_results");
  within(s.history_retention_days, 7, 365, "history_retention_days");
  if (s.min_results > s.window_results) throw invalid("min_results must be at most window_results");
  return s;
}

const renderSettings = (s: HealthSettingsRow) =>
  create(HealthSettingsSchema, {
    windowResults: s.window_results,
    windowDays: s.window_days,
    minResults: s.min_results,
    historyRetentionDays: s.history_retention_days,
  });

export function healthHandlers(deps: ServiceDeps): Handlers {
  const { health, links } = deps;
  const requireCase = async (actor: Actor | undefined, projectId: string, testCaseId: string) => {
    // The case must be the project's: the catalog tells (NOT_FOUND otherwise), as the caller.
    await deps.catalog.getTestCase({ actor, projectId, testCaseId }).catch((error: unknown) => {
      throw ConnectError.from(error);
    });
  };
  return {
    async getTestCaseHistory(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const limit = pageSize(req.limit, defaultHistory, maxHistory);
      const after = req.cursor ? decodePageToken(req.cursor) : undefined;
      if (req.cursor && !after) throw invalid("cursor is not valid");
      const rows = await health.history(req.projectId, req.testCaseId, req.environmentId, after, limit);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const { rows: healthRows, quarantine } = await health.caseHealth(
        req.projectId,
        req.testCaseId,
        req.environmentId,
      );
      return {
        entries: page.map((row) =>
          create(HistoryEntrySchema, {
            testResultId: row.id,
            runId: row.run_id,
            runName: row.run_name,
            environmentId: row.environment_id,
            testPlanId: row.test_plan_id ?? undefined,
            caseVersion: row.test_case_version,
            status: testStatuses[row.status],
            flaky: row.flaky,
            cause: row.status === "failed" && row.cause ? failureCauses[row.cause] : 0,
            durationMs: row.duration_ms === null ? undefined : BigInt(row.duration_ms),
            summary: row.summary ?? "",
            finishedAt: timestampFromDate(dbDate(row.finished_at ?? new Date())),
            attempts: row.earlier_attempts.length + (row.attempt > 0 ? 1 : 0),
            startedByKeyId: row.started_by_key_id ?? undefined,
            startedByMemberId: row.started_by_key_id ? undefined : (row.started_by_member_id ?? undefined),
            startedByScheduleId: scheduleOf(row.idempotency_key),
            url: links.test(row.project_id, row.run_id, row.id),
            quarantined: row.quarantined,
          }),
        ),
        nextCursor:
          rows.length > limit && last
            ? encodePageToken({ createdAt: last.page_finished_at, id: last.id })
            : "",
        health: healthRows.map((row) => renderCaseHealth(row, quarantine)),
      };
    },

    async listTestHealth(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const limit = pageSize(req.limit, defaultHealthPage, maxHealthPage);
      if (req.testCaseIds.length > maxFilterCases)
        throw invalid(`test_case_ids must hold at most ${maxFilterCases} test cases`);
      const states = req.states.map(
        (state) => listedStates[state] ?? (invalid("states must be known states") as never),
      );
      const offset = decodeOffset(req.cursor);
      const { rows, counts } = await health.list(
        req.projectId,
        {
          ...(req.environmentId && { environmentId: req.environmentId }),
          states,
          testCaseIds: req.testCaseIds,
        },
        offset,
        limit,
      );
      return {
        cases: rows.slice(0, limit).map((row) => renderCaseHealth(row, row.quarantine)),
        nextCursor: rows.length > limit ? encodeOffset(offset + limit) : "",
        counts: Object.fromEntries(counts.map((c) => [stateNumbers[c.listed_state], c.n])),
      };
    },

    async quarantineTestCase(req) {
      const memberId = await requireQuarantiner(deps, req.actor, req.projectId);
      const reason = req.reason.trim();
      if (reason.length === 0 || [...reason].length > maxReason)
        throw invalid(`reason must be 1 to ${maxReason} characters`);
      // One line of text as people see it: no control characters, and no bidirectional overrides
      // that would show the reason (or what follows it on a page) in another order than stored.
      if (/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(reason))
        throw invalid("reason must be one line of text, without control characters");
      if (req.days < 0 || req.days > maxDays) throw invalid(`days must be 1 to ${maxDays}`);
      await requireCase(req.actor, req.projectId, req.testCaseId);
      const row = await health.quarantine({
        projectId: req.projectId,
        testCaseId: req.testCaseId,
        reason,
        days: req.days || defaultDays,
        memberId,
      });
      return { quarantine: renderQuarantine(row) };
    },

    async liftQuarantine(req) {
      const memberId = await requireQuarantiner(deps, req.actor, req.projectId);
      await requireCase(req.actor, req.projectId, req.testCaseId);
      const row = await health.lift(req.projectId, req.testCaseId, memberId);
      return row ? { quarantine: renderQuarantine(row) } : {};
    },

    async listQuarantines(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const rows: QuarantineRow[] = await health.quarantines(
        req.projectId,
        req.testCaseId || undefined,
        req.includeEnded,
      );
      return { quarantines: rows.map(renderQuarantine) };
    },

    async getHealthSettings(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      return { settings: renderSettings(await health.settings(req.projectId)) };
    },

    async updateHealthSettings(req) {
      await authorize(deps, req.actor, req.projectId, Permission.ADMIN);
      if (!req.settings) throw invalid("settings is required");
      const settings = checkSettings({
        window_results: req.settings.windowResults,
        window_days: req.settings.windowDays,
        min_results: req.settings.minResults,
        history_retention_days: req.settings.historyRetentionDays,
      });
      return { settings: renderSettings(await health.updateSettings(req.projectId, settings)) };
    },

    async listQuarantineEvents(req, ctx) {
      if (callerIdentity(ctx) !== "service")
        throw new ConnectError("only services may call this method", Code.PermissionDenied);
      const limit = pageSize(req.limit, defaultEvents, maxEvents);
      const after = req.cursor ? Number.parseInt(req.cursor, 10) : 0;
      if (req.cursor && !(/^\d{1,18}$/.test(req.cursor) && Number.isSafeInteger(after)))
        throw invalid("cursor is not valid");
      const rows = await health.events(after, limit);
      return {
        events: rows.map((row) =>
          create(QuarantineEventSchema, {
            type: eventTypes[row.type] ?? QuarantineEventType.UNSPECIFIED,
            projectId: row.project_id,
            quarantine: renderQuarantine(row),
            at: timestampFromDate(dbDate(row.at)),
            testCaseName: row.case_name ?? "",
          }),
        ),
        nextCursor: rows.at(-1)?.seq ?? req.cursor,
      };
    },
  };
}
