// A run's test health (issue 40): each test's case state beside its result ("new failure", "known
// flaky: 4 of 30 failed", "quarantined"), and the run's quarantined failures, which are counted as
// failed but leave the run's status alone (docs/console.md, "Test health").
import type { Run, TestResult } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Badge } from "../../components/Status";
import { plural } from "../../format";
import { healthNote, healthStateTone } from "../health/health-format";

export function TestHealthNote({ test }: { test: TestResult }) {
  const note = healthNote(test.health, test.quarantined);
  // A failure new against the run's base is marked "new" already (RunFailures.tsx): saying "new
  // failure" beside it would read as a second, different fact.
  if (!note || (note === "new failure" && test.newFailure)) return null;
  const tone = test.quarantined ? "active" : test.health ? healthStateTone[test.health.state] : "neutral";
  return (
    <>
      {" "}
      <Badge tone={tone}>{note}</Badge>
    </>
  );
}

export function QuarantinedFailures({ run }: { run: Run }) {
  const n = run.quarantinedFailures;
  if (n <= 0) return null;
  return (
    <p className="notice notice-info" role="status">
      {plural(n, "quarantined failure")}, not failing the run.
    </p>
  );
}
