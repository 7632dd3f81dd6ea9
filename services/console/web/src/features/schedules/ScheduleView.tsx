// One schedule: what it runs and when, and its recent ticks (the run each started, or why none).
import { useQuery } from "@connectrpc/connect-query";
import { ScheduleState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { isNotFound } from "../../api";
import { scheduleWhat, tickTime } from "../../automation-format";
import { DataTable } from "../../components/DataTable";
import { ErrorNotice } from "../../components/Dialog";
import { Fact, Facts } from "../../components/Facts";
import { DoneNotice } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { sentence } from "../../format";
import { useProject } from "../../project";
import { CronText } from "./CronText";
import { useNames } from "./names";
import { useSchedulePause } from "./pause";
import { ScheduleStateText } from "./ScheduleStateText";

export function ScheduleView() {
  const { scheduleId = "" } = useParams();
  const { projectId, project, path, editor } = useProject();
  const got = useQuery(ConsoleService.method.getSchedule, { projectId, scheduleId });
  const names = useNames(projectId);
  const [done, setDone] = useState<string>();
  const pause = useSchedulePause(projectId, setDone);
  if (isNotFound(got.error) || isNotFound(project.error)) return <NotFound what="Schedule" />;
  if (got.isPending || got.error) return <QueryView query={got} what="the schedule" />;
  const { schedule, recentTicks } = got.data;
  if (!schedule) return <NotFound what="Schedule" />;
  const ticks = recentTicks.map((tick, i) => ({ id: `${tick.dueAt?.seconds ?? i}-${i}`, tick }));
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/schedules")}>Schedules</Link>
      </p>
      <div className="page-head">
        <h1>{schedule.name}</h1>
        {editor && (
          <button
            type="button"
            className="button"
            disabled={pause.isPending}
            onClick={() => pause.toggle(schedule)}
          >
            {schedule.state === ScheduleState.ACTIVE ? "Pause" : "Resume"}
          </button>
        )}
      </div>
      <DoneNotice done={done} />
      <ErrorNotice error={pause.error} />
      <Facts>
        <Fact term="Runs">{scheduleWhat(schedule, names.planNames)}</Fact>
        <Fact term="Environment">
          {names.environmentNames.get(schedule.environmentId) ?? schedule.environmentId}
        </Fact>
        <Fact term="When">
          <CronText cron={schedule.cron} timeZone={schedule.timeZone} />
        </Fact>
        <Fact term="State">
          <ScheduleStateText schedule={schedule} />
        </Fact>
        <Fact term="Created">
          <Time at={schedule.createdAt} />
        </Fact>
      </Facts>
      {schedule.state === ScheduleState.ACTIVE && schedule.nextTicks.length > 0 && (
        <>
          <h2>Next runs</h2>
          <ol className="next-ticks">
            {schedule.nextTicks.map((tick) => (
              <li key={`${tick.seconds}`}>{tickTime(tick, schedule.timeZone)}</li>
            ))}
          </ol>
        </>
      )}
      <h2>Recent ticks</h2>
      {ticks.length === 0 ? (
        <Empty title="No ticks yet.">
          <p>Each time it is due, the run it starts (or why none could start) shows here.</p>
        </Empty>
      ) : (
        <DataTable
          rows={ticks}
          columns={[
            { label: "Due", cell: ({ tick }) => <Time at={tick.dueAt} /> },
            {
              label: "Outcome",
              cell: ({ tick }) =>
                tick.runId ? (
                  <Link to={path(`/runs/${tick.runId}`)}>Run started</Link>
                ) : (
                  <span className="cell-lines">
                    <Badge tone="bad">Not started</Badge>
                    <span className="small">{sentence(tick.failure || "no reason recorded")}</span>
                  </span>
                ),
            },
          ]}
        />
      )}
    </>
  );
}
