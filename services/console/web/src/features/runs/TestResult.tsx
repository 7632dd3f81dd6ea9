// One test of a run: its outcome and the steps as the run ran them, the failing one marked with the
// summary as its reason and those after it "not run", and links to the version of the test case it
// ran and to the test case now. Followed live while the test is not final.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { ArtifactKind, FailureCause, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link, useParams } from "react-router";
import { isNotFound } from "../../api";
import { Fact, Facts, StartedFinished } from "../../components/Facts";
import { isSpecResult, SpecStepList } from "../../components/SpecSteps";
import { NotFound, QueryView } from "../../components/States";
import { TestStatusBadge } from "../../components/Status";
import { artifactUrl, StepList } from "../../components/Steps";
import { duration, waitingText } from "../../format";
import { useProject } from "../../project";
import { AttemptsNotice, AttemptTable } from "./Attempts";
import { FailureGroupLink, NewFailureMark } from "./RunFailures";
import { useRunWatch } from "./watch";

const final = new Set([TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED]);

export function TestResult() {
  const { runId = "", testResultId = "" } = useParams();
  const { projectId, path } = useProject();
  const found = useQuery(ConsoleService.method.getTestResult, { projectId, runId, testResultId });
  const stored = found.data?.test;
  // While the test is not final, the run's stream brings its changes (no polling).
  const watch = useRunWatch(projectId, runId, stored !== undefined && !final.has(stored.status));

  if (isNotFound(found.error)) return <NotFound what="Test" />;
  if (found.isPending || found.error) return <QueryView query={found} what="the test" />;

  const run = watch.details?.run ?? found.data.run?.run;
  const test = run?.tests.find((t) => t.id === testResultId) ?? stored;
  if (!run || !test) return <NotFound what="Test" />;
  const { steps, maxAttempts } = found.data;
  const index = run.tests.findIndex((t) => t.id === test.id);
  const previous = index > 0 ? run.tests[index - 1] : undefined;
  const next = index >= 0 ? run.tests[index + 1] : undefined;
  const testPath = (id: string) => path(`/runs/${run.id}/tests/${id}`);
  const failedAtStep = test.status === TestStatus.FAILED && test.failedStep !== undefined;
  const trace = test.artifacts.find((a) => a.kind === ArtifactKind.TRACE);
  const browserLog = test.artifacts.find((a) => a.kind === ArtifactKind.BROWSER_LOG);
  // The attempt before the current one: a lapsed lease (not a retry of a failure) is "taken over".
  const previousAttempt = test.attempts.at(-2);
  const takenOver = previousAttempt === undefined || previousAttempt.cause === FailureCause.EXECUTOR_LOST;

  return (
    <>
      <p className="eyebrow">
        <Link to={path(`/runs/${run.id}`)}>Run: {run.name}</Link>
      </p>
      <div className="page-head">
        <h1 className="title-with-badge">
          <span>{test.name}</span> <TestStatusBadge status={test.status} />
          <NewFailureMark test={test} />
        </h1>
      </div>
      {(previous || next) && (
        <nav className="pager pager-tests" aria-label="Other tests of this run">
          {previous ? (
            <Link className="button button-small" to={testPath(previous.id)}>
              ← Previous: {previous.name}
            </Link>
          ) : null}
          {next ? (
            <Link className="button button-small pager-next" to={testPath(next.id)}>
              Next: {next.name} →
            </Link>
          ) : null}
        </nav>
      )}
      {!final.has(test.status) && (
        <p className="live-state" role="status">
          <span className={`live-dot${watch.reconnecting ? " live-dot-lost" : ""}`} aria-hidden="true" />{" "}
          {watch.reconnecting
            ? "Connection lost: reconnecting…"
            : "Not finished: this page updates when the test does."}
        </p>
      )}
      {test.status === TestStatus.QUEUED && (
        <p className="notice notice-info">
          {waitingText(test)}.
          {test.waitingFor &&
            " If none takes it in time, it is skipped, saying why, and its credit refunded."}
        </p>
      )}
      {test.attempt > 1 && takenOver && (
        <p className="notice notice-info">
          Attempt {test.attempt} of {maxAttempts}: taken over after an executor stopped responding.
        </p>
      )}
      <AttemptsNotice test={test} />
      {test.summary && !failedAtStep && (
        <p className={`notice ${test.status === TestStatus.FAILED ? "notice-error" : "notice-info"}`}>
          {test.summary}
        </p>
      )}
      <section className="panel" aria-label="Outcome">
        <Facts>
          <Fact term="Duration">{duration(test.durationMs)}</Fact>
          <StartedFinished at={test} />
          <Fact term="Attempt">
            {test.attempt === 0
              ? "not started"
              : test.retries > 0
                ? // Retries, not lapses, bound it: "of N" would mislead.
                  `${test.attempt} (retries: ${test.retries})`
                : `${test.attempt} of ${maxAttempts}`}
          </Fact>
          {test.failureGroup && (
            <Fact term="Failure group">
              <FailureGroupLink test={test} />
            </Fact>
          )}
          {test.testCaseVersion > 0 ? (
            <Fact term="Test case">
              <Link to={path(`/test-cases/${test.testCaseId}?version=${test.testCaseVersion}`)}>
                Version {test.testCaseVersion} (as run)
              </Link>{" "}
              · <Link to={path(`/test-cases/${test.testCaseId}`)}>current version</Link>
            </Fact>
          ) : (
            // Started before versions were kept: only the test case as it is now.
            <Fact term="Test case now">
              <Link to={path(`/test-cases/${test.testCaseId}`)}>{test.name}</Link>
            </Fact>
          )}
        </Facts>
        {failedAtStep && (
          <p className="muted small">
            {steps.length === 0 && isSpecResult(test.stepResults)
              ? `Failed at test ${test.failedStep} of ${test.stepResults.length}.`
              : `Failed at step ${test.failedStep} of ${steps.length}.`}
          </p>
        )}
        {(trace || browserLog) && (
          <p className="artifact-actions">
            {trace && (
              // The Playwright trace viewer, served by the console, reads the trace with this session.
              <a
                className="button button-primary"
                href={`/trace-viewer/index.html?trace=${encodeURIComponent(artifactUrl(trace.id))}`}
                target="_blank"
                rel="noopener"
              >
                Open trace
              </a>
            )}
            {browserLog && (
              <a className="button" href={artifactUrl(browserLog.id)} target="_blank" rel="noopener">
                Browser log (console errors, failed requests)
              </a>
            )}
          </p>
        )}
      </section>
      {test.attempts.length > 1 && (
        <section aria-labelledby="attempts-heading" className="section">
          <h2 id="attempts-heading">Attempts</h2>
          <p className="muted small">
            Oldest first; the last one is the test's outcome below. What changed from the attempt before is
            marked.
          </p>
          <AttemptTable attempts={test.attempts} steps={steps.length} />
        </section>
      )}
      <section aria-labelledby="steps-heading" className="section">
        <h2 id="steps-heading">Steps as run</h2>
        <p className="muted small">
          As they were when the run started. Variables show as <code>{"{{NAME}}"}</code>: their values are
          never stored with a run.
        </p>
        {steps.length === 0 && isSpecResult(test.stepResults) ? (
          // A Playwright spec: its test()s, by their titles, as it reported them.
          <SpecStepList results={test.stepResults} artifacts={test.artifacts} />
        ) : (
          <StepList
            steps={steps}
            outcome={{
              status: test.status,
              failedStep: test.failedStep,
              summary: test.summary,
              stepResults: test.stepResults,
              artifacts: test.artifacts,
            }}
          />
        )}
      </section>
    </>
  );
}
