// Pieces the failure pages and a run's page share: a group's state as a badge, and where a group was
// seen ("in run run_… 2 days ago").
import type { FailureGroupState, FailureOccurrence } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link } from "react-router";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { useProject } from "../../project";
import { groupStateName, groupStateTone } from "./failure-format";

export const GroupStateBadge = ({ state }: { state: FailureGroupState }) => (
  <Badge tone={groupStateTone[state]}>{groupStateName[state]}</Badge>
);

/** Where and when an occurrence was: its run (a link) and how long ago. */
export function Seen({ occurrence }: { occurrence: FailureOccurrence | undefined }) {
  const { path } = useProject();
  if (!occurrence) return <span className="muted">—</span>;
  return (
    <span className="seen">
      <Time at={occurrence.at} /> in run{" "}
      <Link className="id-link" to={path(`/runs/${occurrence.runId}`)}>
        {occurrence.runId}
      </Link>
    </span>
  );
}
