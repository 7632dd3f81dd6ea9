// Pauses an active schedule, or resumes a paused or stopped one, and says so (the list and a
// schedule's page both offer it).
import { type Schedule, ScheduleState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { usePauseResume } from "../../components/usePauseResume";

/** What a schedule's change alters on screen: the list, and the one schedule's page. */
export const scheduleQueries = [ConsoleService.method.listSchedules, ConsoleService.method.getSchedule];

export function useSchedulePause(projectId: string, say: (message: string) => void) {
  return usePauseResume(ConsoleService.method.updateSchedule, {
    isPaused: (schedule: Schedule) => schedule.state !== ScheduleState.ACTIVE,
    request: (schedule, paused) => ({ projectId, scheduleId: schedule.id, paused }),
    said: (schedule, paused) =>
      paused ? `${schedule.name} paused.` : `${schedule.name} resumed: it acts for you from now on.`,
    invalidates: scheduleQueries,
    say,
  });
}
