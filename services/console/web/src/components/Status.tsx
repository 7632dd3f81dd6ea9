// Run and test statuses as badges, and a run's tests at a glance: a stacked bar with its counts.
import type { Run } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  count,
  plural,
  runStatusName,
  runStatusTone,
  type Tone,
  testStatusName,
  testStatusTone,
} from "../format";

export function Badge({ tone, children }: { tone: Tone; children: string }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

export const RunStatusBadge = ({ status }: { status: RunStatus }) => (
  <Badge tone={runStatusTone[status]}>{runStatusName[status]}</Badge>
);

export const TestStatusBadge = ({ status }: { status: TestStatus }) => (
  <Badge tone={testStatusTone[status]}>{testStatusName[status]}</Badge>
);

/**
 * A run's tests by state. With its tests (GetRun, WatchRun) queued and running are counted from
 * them; without (ListRuns) what is not final yet is one "not finished" part.
 */
function partsOf(run: Run) {
  const final = run.passedTests + run.failedTests + run.skippedTests;
  const parts = [
    { key: "passed", label: "passed", n: run.passedTests },
    // A quarantined case's failure counts in failedTests but did not fail the run: shown apart, so
    // a PASSED run is not one red bar.
    { key: "failed", label: "failed", n: run.failedTests - run.quarantinedFailures },
    { key: "quarantined", label: "failed, quarantined", n: run.quarantinedFailures },
    { key: "skipped", label: "skipped", n: run.skippedTests },
  ];
  if (run.tests.length > 0) {
    parts.push(
      {
        key: "running",
        label: "running",
        n: run.tests.filter((t) => t.status === TestStatus.RUNNING).length,
      },
      { key: "queued", label: "queued", n: run.tests.filter((t) => t.status === TestStatus.QUEUED).length },
    );
  } else if (!run.finished || run.status === RunStatus.RUNNING) {
    parts.push({ key: "queued", label: "not finished", n: Math.max(0, run.totalTests - final) });
  }
  return parts;
}

/** The stacked bar alone (for a list row); its text alternative names every count. */
export function RunBar({ run }: { run: Run }) {
  const parts = partsOf(run);
  const words = parts
    .filter((p) => p.n > 0)
    .map((p) => `${count(p.n)} ${p.label}`)
    .join(", ");
  return (
    <span className="runbar" role="img" aria-label={`${plural(run.totalTests, "test")}: ${words || "none"}`}>
      {parts.map((p) =>
        p.n > 0 ? (
          <span key={p.key} className={`runbar-part runbar-${p.key}`} style={{ flexGrow: p.n }} />
        ) : null,
      )}
    </span>
  );
}

/** The bar with a legend of every count (the run page). */
export function RunCounts({ run }: { run: Run }) {
  return (
    <div className="runcounts">
      <RunBar run={run} />
      <ul className="runcounts-legend" aria-label="Tests by status">
        <li>
          <strong>{count(run.totalTests)}</strong> {run.totalTests === 1 ? "test" : "tests"}
        </li>
        {partsOf(run)
          .filter((p) => p.key !== "quarantined" || p.n > 0)
          .map((p) => (
            <li key={p.key}>
              <span className={`swatch runbar-${p.key}`} aria-hidden="true" />
              <strong>{count(p.n)}</strong> {p.label}
            </li>
          ))}
        {run.flakyTests > 0 && (
          // Counted in passed too: said beside it, not as a part of the bar.
          <li>
            <strong>{count(run.flakyTests)}</strong> flaky (passed on retry)
          </li>
        )}
      </ul>
    </div>
  );
}
