import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type AutomationService,
  type Schedule,
  ScheduleSchema,
  ScheduleState,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { dbDate, newId, type Orm } from "@testrun/kit";
import { authorize } from "../access.js";
import { cronProblems, nextTicks } from "../cron.js";
import { exhausted, maxSchedules, notFound, violations } from "../errors.js";

export interface ScheduleRow {
  id: string;
  project_id: string;
  name: string;
  cron: string;
  time_zone: string;
  environment_id: string;
  test_plan_id: string | null;
  tags: string[] | null;
  state: "active" | "paused" | "stopped";
  stopped_reason: string;
  acts_for_member_id: string;
  created_at: Date | string;
}

const states = { active: ScheduleState.ACTIVE, paused: ScheduleState.PAUSED, stopped: ScheduleState.STOPPED };

export function scheduleProto(row: ScheduleRow): Schedule {
  return create(ScheduleSchema, {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    cron: row.cron,
    timeZone: row.time_zone,
    environmentId: row.environment_id,
    selection: row.test_plan_id
      ? { case: "testPlanId", value: row.test_plan_id }
      : { case: "tags", value: { tags: row.tags ?? [] } },
    state: states[row.state],
    stoppedReason: row.stopped_reason,
    actsForMemberId: row.acts_for_member_id,
    nextTicks:
      row.state === "active"
        ? nextTicks(row.cron, row.time_zone, new Date(), 3).map((d) => timestampFromDate(d))
        : [],
    createdAt: timestampFromDate(dbDate(row.created_at)),
  });
}

type Selection =
  | { case: "testPlanId"; value: string }
  | { case: "tags"; value: { tags: string[] } }
  | { case: undefined; value?: undefined };

export interface ScheduleDeps {
  orm: Orm;
  catalog: Client<typeof CatalogService>;
  allowSeconds: boolean;
}

/** The run a schedule starts is checked as a start by its member would be: environment and selection exist, the member may start runs. */
async function checkSelection(
  deps: ScheduleDeps,
  actor: Actor,
  projectId: string,
  environmentId: string,
  selection: Selection,
) {
  if (!selection.case)
    throw violations([{ field: "selection", description: "a test plan or tags are required" }]);
  await deps.catalog.resolveRunSelection({
    actor,
    projectId,
    environment: environmentId,
    selection:
      selection.case === "testPlanId"
        ? { case: "testPlan", value: selection.value }
        : { case: "tags", value: { tags: selection.value.tags } },
  });
}

function validate(deps: ScheduleDeps, fields: { name?: string; cron?: string; timeZone?: string }) {
  const problems: { field: string; description: string }[] = [];
  if (fields.name !== undefined && ([...fields.name].length < 1 || [...fields.name].length > 100))
    problems.push({ field: "name", description: "must be 1 to 100 characters" });
  if (fields.cron !== undefined || fields.timeZone !== undefined)
    problems.push(...cronProblems(fields.cron ?? "* * * * *", fields.timeZone ?? "UTC", deps.allowSeconds));
  const error = violations(problems);
  if (error) throw error;
}

const memberOf = (actor: Actor | undefined): string => {
  if (actor?.kind.case !== "memberId")
    throw new ConnectError(
      "a schedule acts for a member: only members create or activate schedules",
      Code.InvalidArgument,
    );
  return actor.kind.value;
};

const firstDue = (cron: string, timeZone: string) => nextTicks(cron, timeZone, new Date(), 1)[0] ?? null;

/** CreateSchedule … PreviewSchedule (automation.proto). */
export function scheduleHandlers(deps: ScheduleDeps): Partial<ServiceImpl<typeof AutomationService>> {
  const em = () => deps.orm.em.fork();
  const load = async (projectId: string, id: string): Promise<ScheduleRow> => {
    const rows = await em().execute<ScheduleRow[]>(
      "select * from automation.schedules where id = ? and project_id = ?",
      [id, projectId],
    );
    if (!rows[0]) throw notFound("schedule");
    return rows[0];
  };
  return {
    async createSchedule(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const memberId = memberOf(req.actor);
      const timeZone = req.timeZone || "UTC";
      validate(deps, { name: req.name, cron: req.cron, timeZone });
      await checkSelection(deps, req.actor as Actor, req.projectId, req.environmentId, req.selection);
      const id = newId("sch");
      const state = req.paused ? "paused" : "active";
      // The count and the insert in one statement: concurrent creates cannot pass the bound together
      // by more than they would one at a time under the project's advisory lock.
      const rows = await em().transactional(async (tx) => {
        await tx.execute("select pg_advisory_xact_lock(hashtext(?))", [
          `automation.schedules/${req.projectId}`,
        ]);
        const [{ count }] = (await tx.execute(
          "select count(*)::int as count from automation.schedules where project_id = ?",
          [req.projectId],
        )) as [{ count: number }];
        if (count >= maxSchedules) throw exhausted(`a project has at most ${maxSchedules} schedules`);
        return tx.execute<ScheduleRow[]>(
          `insert into automation.schedules (id, project_id, name, cron, time_zone, environment_id, test_plan_id, tags, state, acts_for_member_id, next_due_at, created_at)
           values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, now()) returning *`,
          [
            id,
            req.projectId,
            req.name,
            req.cron,
            timeZone,
            req.environmentId,
            req.selection.case === "testPlanId" ? req.selection.value : null,
            req.selection.case === "tags" ? JSON.stringify(req.selection.value.tags) : null,
            state,
            memberId,
            state === "active" ? firstDue(req.cron, timeZone) : null,
          ],
        );
      });
      return { schedule: scheduleProto(rows[0] as ScheduleRow) };
    },

    async updateSchedule(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const current = await load(req.projectId, req.scheduleId);
      validate(deps, {
        name: req.name,
        cron: req.cron ?? (req.timeZone !== undefined ? current.cron : undefined),
        timeZone:
          req.timeZone !== undefined
            ? req.timeZone || "UTC"
            : req.cron !== undefined
              ? current.time_zone
              : undefined,
      });
      const next = {
        name: req.name ?? current.name,
        cron: req.cron ?? current.cron,
        timeZone: req.timeZone !== undefined ? req.timeZone || "UTC" : current.time_zone,
        environmentId: req.environmentId ?? current.environment_id,
        testPlanId:
          req.selection.case === "testPlanId"
            ? req.selection.value
            : req.selection.case === "tags"
              ? null
              : current.test_plan_id,
        tags:
          req.selection.case === "tags"
            ? req.selection.value.tags
            : req.selection.case === "testPlanId"
              ? null
              : current.tags,
      };
      let state = current.state;
      let member = current.acts_for_member_id;
      let reason = current.stopped_reason;
      if (req.paused === true) state = "paused";
      const changesWhatRuns = req.environmentId !== undefined || req.selection.case !== undefined;
      // Changing what it runs, or activating it, makes that member the one it acts for: the runs
      // it starts are then theirs (a stopped schedule needs a new member; an operator's edit keeps
      // the member it had).
      if (req.paused === false || (changesWhatRuns && req.actor?.kind.case === "memberId"))
        member = memberOf(req.actor);
      if (req.paused === false) {
        state = "active";
        reason = "";
      }
      if (changesWhatRuns || req.paused === false)
        await checkSelection(
          deps,
          { ...(req.actor as Actor), kind: { case: "memberId", value: member } } as Actor,
          req.projectId,
          next.environmentId,
          next.testPlanId
            ? { case: "testPlanId", value: next.testPlanId }
            : { case: "tags", value: { tags: next.tags ?? [] } },
        );
      const rows = await em().execute<ScheduleRow[]>(
        `update automation.schedules set name = ?, cron = ?, time_zone = ?, environment_id = ?, test_plan_id = ?, tags = ?::jsonb,
           state = ?, stopped_reason = ?, acts_for_member_id = ?, next_due_at = ?
         where id = ? and project_id = ? returning *`,
        [
          next.name,
          next.cron,
          next.timeZone,
          next.environmentId,
          next.testPlanId,
          next.tags ? JSON.stringify(next.tags) : null,
          state,
          reason,
          member,
          state === "active" ? firstDue(next.cron, next.timeZone) : null,
          req.scheduleId,
          req.projectId,
        ],
      );
      if (!rows[0]) throw notFound("schedule");
      return { schedule: scheduleProto(rows[0]) };
    },

    async deleteSchedule(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const rows = await em().execute<{ id: string }[]>(
        `with gone as (delete from automation.schedules where id = ? and project_id = ? returning id),
           ticks as (delete from automation.schedule_ticks where schedule_id in (select id from gone))
         select id from gone`,
        [req.scheduleId, req.projectId],
      );
      if (rows.length === 0) throw notFound("schedule");
      return {};
    },

    async listSchedules(req) {
      await authorize(deps.catalog, req.actor, req.projectId, false);
      const rows = await em().execute<ScheduleRow[]>(
        "select * from automation.schedules where project_id = ? order by name, id limit ?",
        [req.projectId, maxSchedules],
      );
      return { schedules: rows.map(scheduleProto) };
    },

    async getSchedule(req) {
      await authorize(deps.catalog, req.actor, req.projectId, false);
      const row = await load(req.projectId, req.scheduleId);
      const ticks = await em().execute<{ due_at: Date | string; run_id: string | null; failure: string }[]>(
        "select due_at, run_id, failure from automation.schedule_ticks where schedule_id = ? order by due_at desc limit 50",
        [row.id],
      );
      return {
        schedule: scheduleProto(row),
        recentTicks: ticks.map((t) => ({
          dueAt: timestampFromDate(dbDate(t.due_at)),
          runId: t.run_id ?? undefined,
          failure: t.failure,
        })),
      };
    },

    async previewSchedule(req) {
      await authorize(deps.catalog, req.actor, req.projectId, false);
      const timeZone = req.timeZone || "UTC";
      validate(deps, { cron: req.cron, timeZone });
      return { nextTicks: nextTicks(req.cron, timeZone, new Date(), 3).map((d) => timestampFromDate(d)) };
    },
  };
}
