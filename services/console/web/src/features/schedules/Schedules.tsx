// A project's schedules: runs started on their own at the times a cron expression gives. Every
// member reads them; Editors and above create, edit, pause, resume and delete them
// (AutomationService decides; docs/console.md, "Schedules").
import { useQuery } from "@connectrpc/connect-query";
import { type Schedule, ScheduleState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link } from "react-router";
import { isNotFound } from "../../api";
import { scheduleWhat } from "../../automation-format";
import { DataTable } from "../../components/DataTable";
import { ErrorNotice } from "../../components/Dialog";
import { DeleteDialog, DoneNotice, RowAction, useListPage } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Time } from "../../components/Time";
import { useProject } from "../../project";
import { CronText } from "./CronText";
import { useNames } from "./names";
import { scheduleQueries, useSchedulePause } from "./pause";
import { ScheduleDialog } from "./ScheduleDialog";
import { ScheduleStateText } from "./ScheduleStateText";

/** What a dialog is open for. */
type Editing =
  | { kind: "create" }
  | { kind: "edit"; schedule: Schedule }
  | { kind: "delete"; schedule: Schedule };

export function Schedules() {
  const { projectId, project, name, editor, path } = useProject();
  const schedules = useQuery(ConsoleService.method.listSchedules, { projectId });
  const names = useNames(projectId);
  const list = useListPage<Editing>({ onOpen: () => pause.reset() });
  const pause = useSchedulePause(projectId, list.say);
  if (isNotFound(project.error) || isNotFound(schedules.error)) return <NotFound what="Project" />;
  const { editing, open, close } = list;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Schedules</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => open({ kind: "create" })}>
            New schedule
          </button>
        )}
      </div>
      <p className="lead">
        Runs that start on their own: a test plan or tags on an environment, at the times a cron expression
        gives. Each run spends credits like any other and acts for the member who made the schedule, last
        resumed it or last changed what it runs.
      </p>
      {project.data && !editor && (
        <p className="notice notice-info">Viewers see the schedules; Editors and above change them.</p>
      )}
      <DoneNotice done={list.done} />
      <ErrorNotice error={pause.error} />
      <QueryView
        query={schedules}
        what="schedules"
        isEmpty={(data) => data.schedules.length === 0}
        empty={
          <Empty title="No schedules yet.">
            <p>
              {editor
                ? "Create one to run a plan every hour against production, or every night against staging."
                : "An Editor creates them."}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.schedules}
            columns={[
              {
                label: "Name",
                className: "cell-strong",
                cell: (s) => <Link to={path(`/schedules/${s.id}`)}>{s.name}</Link>,
              },
              { label: "Runs", cell: (s) => scheduleWhat(s, names.planNames) },
              {
                label: "Environment",
                cell: (s) => names.environmentNames.get(s.environmentId) ?? s.environmentId,
              },
              { label: "When", cell: (s) => <CronText cron={s.cron} timeZone={s.timeZone} /> },
              { label: "State", cell: (s) => <ScheduleStateText schedule={s} /> },
              {
                label: "Next run",
                cell: (s) =>
                  s.state === ScheduleState.ACTIVE ? (
                    <Time at={s.nextTicks[0]} />
                  ) : (
                    <span className="muted">—</span>
                  ),
              },
            ]}
            actions={
              editor
                ? (s) => (
                    <div className="row-actions">
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`${s.state === ScheduleState.ACTIVE ? "Pause" : "Resume"} ${s.name}`}
                        disabled={pause.isPending}
                        onClick={() => pause.toggle(s)}
                      >
                        {s.state === ScheduleState.ACTIVE ? "Pause" : "Resume"}
                      </button>
                      <RowAction
                        action="Edit"
                        item={s.name}
                        onClick={() => open({ kind: "edit", schedule: s })}
                      />
                      <RowAction
                        action="Delete"
                        item={s.name}
                        danger
                        onClick={() => open({ kind: "delete", schedule: s })}
                      />
                    </div>
                  )
                : undefined
            }
          />
        )}
      </QueryView>
      {(editing?.kind === "create" || editing?.kind === "edit") && (
        <ScheduleDialog
          projectId={projectId}
          schedule={editing.kind === "edit" ? editing.schedule : undefined}
          names={names}
          onClose={close}
          onSaved={list.say}
        />
      )}
      <DeleteDialog
        method={ConsoleService.method.deleteSchedule}
        item={editing?.kind === "delete" ? editing.schedule : undefined}
        request={(schedule) => ({ projectId, scheduleId: schedule.id })}
        invalidates={scheduleQueries}
        title={(schedule) => `Delete ${schedule.name}?`}
        label="Delete schedule"
        deleted={(schedule) => `${schedule.name} deleted.`}
        onClose={close}
        onDeleted={list.say}
      >
        {() => <p>It starts no more runs, and its record of ticks goes with it. The runs it started stay.</p>}
      </DeleteDialog>
    </>
  );
}
