// A run's failures as new or known (issue 41; docs/console.md, "Failures"): at the top of a finished
// run with a base, how many of its failures are new against that base and a link to compare the
// two; beside a failed test, "new" when its case did not fail in the base, and its failure group
// ("seen 14 times in 6 cases since run X, 2 days ago").
import type { Run, TestResult } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link } from "react-router";
import { Badge } from "../../components/Status";
import { dateOf, plural, relativeTime } from "../../format";
import { useProject } from "../../project";
import { seenText } from "../failures/failure-format";

/** "2 new failures against run X" and "Compare", once the run has finished with a base. */
export function NewFailures({ run }: { run: Run }) {
  const { path } = useProject();
  if (!run.finished || !run.baseRunId) return null;
  const n = run.newFailures ?? 0;
  return (
    <div className={`notice ${n > 0 ? "notice-error" : "notice-info"} new-failures`} role="status">
      <p>
        {n > 0 ? plural(n, "new failure") : "No new failures"} against{" "}
        <Link className="id-link" to={path(`/runs/${run.baseRunId}`)}>
          {run.baseRunId}
        </Link>
        .
      </p>
      <Link className="button button-small" to={path(`/runs/${run.id}/compare`)}>
        Compare
      </Link>
    </div>
  );
}

/** "new", beside a failed test's status, when its case did not fail in the run's base. */
export function NewFailureMark({ test }: { test: TestResult }) {
  if (!test.newFailure) return null;
  return (
    <>
      {" "}
      <Badge tone="bad">new</Badge>
    </>
  );
}

/** A failed test's group: "seen 14 times in 6 cases since run X, 2 days ago", a link to it. */
export function FailureGroupLink({ test }: { test: TestResult }) {
  const { path } = useProject();
  const group = test.failureGroup;
  if (!group) return null;
  const since = dateOf(group.firstSeenAt);
  return (
    <Link className="failure-group-link" to={path(`/failures/${group.id}`)}>
      {seenText(group.occurrences, group.casesAffected)} since run {group.firstSeenRunId}
      {since && `, ${relativeTime(since)}`}
    </Link>
  );
}
