// One run, live: what it is, who started it, its tests at a glance and one by one. Follows the run
// with WatchRun until it finishes; Editors and above cancel it.
import type { RunDetails } from "@testrun/gen/testrun/console/v1/console_pb";
import { type Run as RunMessage, RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { Fact, Facts, StartedFinished } from "../../components/Facts";
import { Failed, Loading, NotFound } from "../../components/States";
import { Badge, RunCounts, RunStatusBadge, TestStatusBadge } from "../../components/Status";
import { count, duration, skipReasonText, waitingText } from "../../format";
import { useProject } from "../../project";
import { causeName } from "./Attempts";
import { CancelRunDialog } from "./CancelRunDialog";
import { FailureGroupLink, NewFailureMark, NewFailures } from "./RunFailures";
import { QuarantinedFailures, TestHealthNote } from "./RunHealth";
import { useRunWatch } from "./watch";

export function Run() {
  const { runId = "" } = useParams();
  const { projectId, project, editor, path } = useProject();
  const watch = useRunWatch(projectId, runId);
  const [cancelling, setCancelling] = useState(false);

  if (isNotFound(watch.error)) return <NotFound what="Run" />;
  if (isNotFound(project.error)) return <NotFound what="Project" />;
  if (!watch.details) {
    if (watch.error) return <Failed error={watch.error} />;
    return <Loading what={watch.reconnecting ? "the run (reconnecting)" : "the run"} />;
  }
  const details = watch.details;
  const run = details.run;
  if (!run) return <NotFound what="Run" />;

  return (
    <>
      <p className="eyebrow">
        <Link to={path("/runs")}>Runs</Link>
      </p>
      <div className="page-head">
        <h1 className="title-with-badge">
          <span>{run.name}</span> <RunStatusBadge status={run.status} />
        </h1>
        {editor && !run.finished && (
          <button type="button" className="button button-danger" onClick={() => setCancelling(true)}>
            Cancel run
          </button>
        )}
      </div>
      <LiveState finished={run.finished} reconnecting={watch.reconnecting} polling={watch.polling ?? false} />
      {watch.error && <Failed error={watch.error} />}
      {run.status === RunStatus.SKIPPED && skipReasonText[run.skipReason] && (
        <p className="notice notice-info">{skipReasonText[run.skipReason]}</p>
      )}
      <section className="panel run-summary" aria-label="Summary">
        <RunCounts run={run} />
        <RunFacts details={details} />
      </section>
      <NewFailures run={run} />
      <QuarantinedFailures run={run} />
      <FlakyTests run={run} />
      <section aria-labelledby="tests-heading" className="section">
        <h2 id="tests-heading">Tests</h2>
        <TestTable run={run} />
      </section>
      <CancelRunDialog
        run={run}
        open={cancelling}
        onClose={() => setCancelling(false)}
        onCancelled={(cancelled) => {
          watch.show(cancelled);
          setCancelling(false);
        }}
      />
    </>
  );
}

/**
 * Whether the page follows the run, discreetly: a live dot, that the connection is being retried,
 * or that live updates are at capacity and the run is read every few seconds instead.
 */
function LiveState({
  finished,
  reconnecting,
  polling,
}: {
  finished: boolean;
  reconnecting: boolean;
  polling: boolean;
}) {
  return (
    <p className="live-state" role="status">
      {!finished &&
        (polling ? (
          <>
            <span className="live-dot live-dot-lost" aria-hidden="true" /> Busy: live updates are at capacity,
            so this page reads the run every few seconds
          </>
        ) : reconnecting ? (
          <>
            <span className="live-dot live-dot-lost" aria-hidden="true" /> Connection lost: reconnecting…
          </>
        ) : (
          <>
            <span className="live-dot" aria-hidden="true" /> Live: this page updates as the tests progress
          </>
        ))}
    </p>
  );
}

/** Who started the run: "Owner", "Owner, with the API key “ci”", "an operator". */
export function startedBy(details: RunDetails): string {
  const run = details.run;
  const member = details.startedByMemberName || run?.startedByMemberId;
  const key = details.startedByKeyName
    ? `the API key “${details.startedByKeyName}”`
    : run?.startedByKeyId
      ? `the API key ${run.startedByKeyId}`
      : "";
  if (member && key) return `${member}, with ${key}`;
  return member || key || "an operator";
}

function RunFacts({ details }: { details: RunDetails }) {
  const { path } = useProject();
  const run = details.run;
  if (!run) return null;
  return (
    <Facts>
      <Fact term="Started by">{startedBy(details)}</Fact>
      <Fact term="Environment">
        <Link to={path("/environments")}>{details.environmentName || run.environmentId}</Link>
      </Fact>
      <Fact term="Test plan">
        {run.testPlanId ? (
          <Link to={path(`/test-plans/${run.testPlanId}`)}>{details.testPlanName || run.testPlanId}</Link>
        ) : (
          <span className="muted">none (chosen by tags or test cases)</span>
        )}
      </Fact>
      <StartedFinished at={run} />
      <Fact term="Duration">{duration(run.durationMs, "—")}</Fact>
    </Facts>
  );
}

/**
 * The tests that passed only on retry, apart: they count as passed, but an earlier attempt failed
 * with a cause of the test's own (the system's causes never make a test flaky).
 */
function FlakyTests({ run }: { run: RunMessage }) {
  const { path } = useProject();
  const flaky = run.tests.filter((test) => test.flaky);
  if (!flaky.length) return null;
  return (
    <section aria-labelledby="flaky-heading" className="section">
      <h2 id="flaky-heading">Flaky: passed on retry ({count(flaky.length)})</h2>
      <p className="muted small">
        Counted as passed, but an earlier attempt of each failed first. Open one to compare its attempts.
      </p>
      <ul className="flaky-list">
        {flaky.map((test) => {
          const failed = test.attempts.filter((a) => a.status === TestStatus.FAILED);
          return (
            <li key={test.id}>
              <Link to={path(`/runs/${run.id}/tests/${test.id}`)}>{test.name}</Link>:{" "}
              {failed
                .map((a) => `attempt ${a.number} failed (${causeName[a.cause].split(":")[0] || "no cause"})`)
                .join(", ")}
              , then attempt {test.attempts.at(-1)?.number} passed
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function TestTable({ run }: { run: RunMessage }) {
  const { path } = useProject();
  return (
    <DataTable
      rows={run.tests}
      columns={[
        {
          label: "Status",
          className: "cell-nowrap",
          cell: (test) => (
            <>
              <TestStatusBadge status={test.status} />
              {test.flaky && (
                <>
                  {" "}
                  <Badge tone="waiting">Passed on retry</Badge>
                </>
              )}
              <NewFailureMark test={test} />
              <TestHealthNote test={test} />
            </>
          ),
        },
        {
          label: "Test",
          className: "cell-strong",
          cell: (test) => <Link to={path(`/runs/${run.id}/tests/${test.id}`)}>{test.name}</Link>,
        },
        { label: "Duration", className: "cell-nowrap", cell: (test) => duration(test.durationMs) },
        {
          label: "Summary",
          className: "cell-summary",
          // A waiting test says what for: muted while it only waits its turn, plain when no executor
          // here can take it.
          cell: (test) =>
            test.failureGroup ? (
              // A failed test's summary, then the group it joined: how often it was seen, since when.
              <span className="cell-lines">
                <span>{test.summary}</span>
                <FailureGroupLink test={test} />
              </span>
            ) : (
              test.summary ||
              (test.status === TestStatus.QUEUED ? (
                <span className={test.waitingFor ? undefined : "muted"}>{waitingText(test)}</span>
              ) : (
                <span className="muted">—</span>
              ))
            ),
        },
      ]}
    />
  );
}
