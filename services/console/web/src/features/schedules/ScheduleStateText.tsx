import { type Schedule, ScheduleState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { scheduleStateName, scheduleStateTone } from "../../automation-format";
import { Badge } from "../../components/Status";
import { sentence } from "../../format";

/** Active, paused or stopped, and why it stopped. */
export function ScheduleStateText({ schedule }: { schedule: Schedule }) {
  return (
    <span className="cell-lines">
      <Badge tone={scheduleStateTone[schedule.state]}>{scheduleStateName[schedule.state]}</Badge>
      {schedule.state === ScheduleState.STOPPED && schedule.stoppedReason && (
        <span className="small">{sentence(schedule.stoppedReason)}</span>
      )}
    </span>
  );
}
