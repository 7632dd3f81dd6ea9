// A test's attempts side by side (one row each, a card each under 390 px), what differed from the
// attempt before marked, and a retried test's notices: "Passed on retry (flaky)", or a failure by
// the system's cause said to be the system's fault, not the test's.
import {
  ArtifactKind,
  FailureCause,
  type TestAttempt,
  type TestResult,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { ReactNode } from "react";
import { DataTable } from "../../components/DataTable";
import { Badge, TestStatusBadge } from "../../components/Status";
import { artifactUrl } from "../../components/Steps";
import { duration } from "../../format";

/** Causes as the contract names them (docs/rest-api.md), with a few words for a person. */
export const causeName: Record<FailureCause, string> = {
  [FailureCause.UNSPECIFIED]: "",
  [FailureCause.ASSERTION]: "assertion: an expectation not met",
  [FailureCause.LOCATOR]: "locator: no element, or several",
  [FailureCause.TIMEOUT]: "timeout: a deadline passed",
  [FailureCause.NETWORK]: "network: DNS, refused, reset or TLS",
  [FailureCause.EGRESS_REFUSED]: "egress_refused: the egress guard refused it",
  [FailureCause.ENVIRONMENT_UNREACHABLE]: "environment_unreachable",
  [FailureCause.BROWSER]: "browser: it could not start or crashed",
  [FailureCause.EXECUTOR_LOST]: "executor_lost: its executor stopped responding",
  [FailureCause.NO_EXECUTOR]: "no_executor: no executor took it in time",
};

/** The system's own causes: retried without using the test's retries, never the test's fault. */
export const isSystemCause = (cause: FailureCause) =>
  cause === FailureCause.BROWSER ||
  cause === FailureCause.EXECUTOR_LOST ||
  cause === FailureCause.NO_EXECUTOR;

/** A cause, marked as the system's fault when it is. */
export function Cause({ cause }: { cause: FailureCause }) {
  if (cause === FailureCause.UNSPECIFIED) return <span className="muted">—</span>;
  return (
    <span className="cause">
      {causeName[cause]}
      {isSystemCause(cause) && (
        <>
          {" "}
          <Badge tone="neutral">system's fault</Badge>
        </>
      )}
    </span>
  );
}

const artifactWords: Partial<Record<ArtifactKind, string>> = {
  [ArtifactKind.SCREENSHOT]: "screenshot",
  [ArtifactKind.TRACE]: "trace",
  [ArtifactKind.BROWSER_LOG]: "browser log",
  [ArtifactKind.HTTP_RESPONSE]: "response",
};

/** Whether a value differs from the attempt before's: marked for the eye, said for a screen reader. */
function Differed({ changed, children }: { changed: boolean; children: ReactNode }) {
  if (!changed) return <>{children}</>;
  return (
    <mark className="attempt-changed">
      {children}
      <span className="visually-hidden"> (changed)</span>
    </mark>
  );
}

/** What a retried test's page says first: passed on retry, or why its attempts ended. */
export function AttemptsNotice({ test }: { test: TestResult }) {
  const failed = test.attempts.filter((a) => a.status === TestStatus.FAILED);
  if (test.flaky) {
    const causes = [...new Set(failed.map((a) => causeName[a.cause].split(":")[0]))].join(", ");
    return (
      <p className="notice notice-warning">
        Passed on retry (flaky):{" "}
        {failed.length === 1 ? "an earlier attempt" : `${failed.length} earlier attempts`} failed ({causes})
        before attempt {test.attempts.at(-1)?.number} passed. The test counts as passed.
      </p>
    );
  }
  if (test.status === TestStatus.FAILED && isSystemCause(test.cause)) {
    return (
      <p className="notice notice-info">
        The system's fault, not the test's: {causeName[test.cause]}. Attempts with the system's cause are
        retried without using the test's retries.
      </p>
    );
  }
  return null;
}

/** Every attempt in a table, oldest first; what differs from the attempt before is marked. */
export function AttemptTable({ attempts, steps }: { attempts: readonly TestAttempt[]; steps: number }) {
  const rows = attempts.map((attempt) => ({ ...attempt, id: String(attempt.number) }));
  const before = (index: number) => (index > 0 ? attempts[index - 1] : undefined);
  const differs = (index: number, value: (a: TestAttempt) => unknown) => {
    const previous = before(index);
    const current = attempts[index];
    return previous !== undefined && current !== undefined && value(previous) !== value(current);
  };
  return (
    <DataTable
      rows={rows}
      columns={[
        { label: "Attempt", className: "cell-strong", cell: (a) => `#${a.number}` },
        {
          label: "Status",
          cell: (a, i) => (
            <Differed changed={differs(i, (x) => x.status)}>
              <TestStatusBadge status={a.status} />
            </Differed>
          ),
        },
        {
          label: "Cause",
          cell: (a, i) => (
            <Differed changed={differs(i, (x) => x.cause)}>
              <Cause cause={a.cause} />
            </Differed>
          ),
        },
        {
          label: "Failed step",
          className: "cell-nowrap",
          cell: (a, i) => (
            <Differed changed={differs(i, (x) => x.failedStep)}>
              {a.failedStep === undefined ? <span className="muted">—</span> : `${a.failedStep} of ${steps}`}
            </Differed>
          ),
        },
        {
          label: "Duration",
          className: "cell-nowrap",
          cell: (a) => (a.status === TestStatus.RUNNING ? "running" : duration(a.durationMs)),
        },
        {
          label: "Executor",
          className: "cell-nowrap",
          cell: (a, i) => (
            <Differed changed={differs(i, (x) => x.executorId)}>
              {a.executorId ? <code>{a.executorId}</code> : <span className="muted">—</span>}
            </Differed>
          ),
        },
        {
          label: "Summary",
          className: "cell-summary",
          cell: (a) => a.summary || <span className="muted">—</span>,
        },
        {
          label: "Artifacts",
          cell: (a) =>
            a.artifacts.length ? (
              <ul className="attempt-artifacts">
                {a.artifacts.map((artifact) => (
                  <li key={artifact.id}>
                    <a href={artifactUrl(artifact.id)} target="_blank" rel="noopener">
                      {artifactWords[artifact.kind] ?? "file"} {artifact.name}
                    </a>
                  </li>
                ))}
              </ul>
            ) : (
              <span className="muted">none</span>
            ),
        },
      ]}
    />
  );
}
