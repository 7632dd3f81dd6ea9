import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type Artifact,
  ArtifactKind,
  FailureCause,
  type Run,
  RunStatus,
  SkipReason,
  type StepResult,
  type TestAttempt,
  type TestResult,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { caseHealthJson } from "./health-json.js";

export { caseHealthJson, healthStateName, quarantineJson, resultRefJson } from "./health-json.js";

/**
 * A run as GET /v1/runs/:id shows it (docs/rest-api.md, "Resources"), shared by the gateway and
 * the automation service's webhook payloads, so that both always say the same. The gateway's
 * render.ts types these by its OpenAPI schemas (api/schemas.ts).
 */

export const rfc3339 = (timestamp: Timestamp | undefined): string | null =>
  timestamp ? timestampDate(timestamp).toISOString() : null;

type Status = "QUEUED" | "RUNNING" | "PASSED" | "FAILED" | "SKIPPED";
type SkipReasonName = "environment_unreachable" | "cancelled" | "no_executor";
type ArtifactKindName = "screenshot" | "trace" | "browser_log" | "http_response";
type ContentType = "image/png" | "application/zip" | "application/json";
type CauseName =
  | "assertion"
  | "locator"
  | "timeout"
  | "network"
  | "egress_refused"
  | "environment_unreachable"
  | "browser"
  | "executor_lost"
  | "no_executor";

const durationOf = (ms: bigint | undefined): number | null => (ms === undefined ? null : Number(ms));

/** A status by its enum name (the names of RunStatus and TestStatus are the contract's). */
const statusOf = (name: string | undefined): Status => name as Status;

const skipReasons: Partial<Record<SkipReason, SkipReasonName>> = {
  [SkipReason.ENVIRONMENT_UNREACHABLE]: "environment_unreachable",
  [SkipReason.CANCELLED]: "cancelled",
  [SkipReason.NO_EXECUTOR]: "no_executor",
};

/** A failed attempt's cause by the contract's name (decisions.md); null when not failed. */
const causes: Record<FailureCause, CauseName | null> = {
  [FailureCause.UNSPECIFIED]: null,
  [FailureCause.ASSERTION]: "assertion",
  [FailureCause.LOCATOR]: "locator",
  [FailureCause.TIMEOUT]: "timeout",
  [FailureCause.NETWORK]: "network",
  [FailureCause.EGRESS_REFUSED]: "egress_refused",
  [FailureCause.ENVIRONMENT_UNREACHABLE]: "environment_unreachable",
  [FailureCause.BROWSER]: "browser",
  [FailureCause.EXECUTOR_LOST]: "executor_lost",
  [FailureCause.NO_EXECUTOR]: "no_executor",
};
export const causeOf = (cause: FailureCause): CauseName | null => causes[cause] ?? null;

const artifactKinds: Record<ArtifactKind, ArtifactKindName | undefined> = {
  [ArtifactKind.UNSPECIFIED]: undefined,
  [ArtifactKind.SCREENSHOT]: "screenshot",
  [ArtifactKind.TRACE]: "trace",
  [ArtifactKind.BROWSER_LOG]: "browser_log",
  [ArtifactKind.HTTP_RESPONSE]: "http_response",
};

/**
 * Where GET /v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId} serves an artifact's bytes,
 * under the API's public origin.
 */
export const artifactUrl = (
  origin: string,
  artifact: Pick<Artifact, "id" | "runId" | "testResultId">,
): string =>
  `${origin}/v1/runs/${encodeURIComponent(artifact.runId)}/tests/${encodeURIComponent(artifact.testResultId)}/artifacts/${encodeURIComponent(artifact.id)}`;

export const artifactJson = (artifact: Artifact, origin: string) => ({
  id: artifact.id,
  kind: artifactKinds[artifact.kind] ?? "screenshot",
  name: artifact.name,
  contentType: artifact.contentType as ContentType,
  size: Number(artifact.sizeBytes),
  step: artifact.step,
  url: artifactUrl(origin, artifact),
});

/** The artifacts REST shows (kinds it names), in the order stored. */
const artifactsJson = (artifacts: readonly Artifact[], origin: string) =>
  artifacts
    .filter((artifact) => artifactKinds[artifact.kind] !== undefined)
    .map((artifact) => artifactJson(artifact, origin));

const stepResultJson = (step: StepResult) => ({
  number: step.number,
  status: statusOf(TestStatus[step.status]),
  durationMs: Number(step.durationMs),
  // A Playwright spec's step: its `test()`'s title and, when it failed, its redacted error.
  name: step.name || null,
  error: step.error || null,
});

/** One attempt of a test (docs/rest-api.md, "Attempts"): the test result's fields, for that attempt. */
export const attemptJson = (attempt: TestAttempt, origin: string) => ({
  number: attempt.number,
  status: statusOf(TestStatus[attempt.status]),
  startedAt: rfc3339(attempt.startedAt),
  finishedAt: rfc3339(attempt.finishedAt),
  durationMs: durationOf(attempt.durationMs),
  summary: attempt.summary,
  failedStep: attempt.failedStep ?? null,
  stepResults: attempt.stepResults.map(stepResultJson),
  cause: attempt.status === TestStatus.FAILED ? causeOf(attempt.cause) : null,
  executor: attempt.executorId || null,
  artifacts: artifactsJson(attempt.artifacts, origin),
});

/** A test result; `origin` is the API's public origin, the base of its artifacts' urls. */
export const testResultJson = (test: TestResult, origin: string) => ({
  id: test.id,
  testCaseId: test.testCaseId,
  name: test.name,
  status: statusOf(TestStatus[test.status]),
  durationMs: durationOf(test.durationMs),
  summary: test.summary,
  url: test.url,
  artifacts: artifactsJson(test.artifacts, origin),
  failedStep: test.failedStep ?? null,
  stepResults: test.stepResults.map(stepResultJson),
  flaky: test.flaky,
  cause: test.status === TestStatus.FAILED ? causeOf(test.cause) : null,
  retries: test.retries,
  attempts: test.attempts.map((attempt) => attemptJson(attempt, origin)),
  newFailure: test.newFailure,
  failureGroup: test.failureGroup
    ? {
        id: test.failureGroup.id,
        occurrences: test.failureGroup.occurrences,
        casesAffected: test.failureGroup.casesAffected,
        firstSeenRunId: test.failureGroup.firstSeenRunId,
        firstSeenAt: rfc3339(test.failureGroup.firstSeenAt),
      }
    : null,
  // Test health (docs/rest-api.md, "Test health and quarantine"): set by the reads of one run.
  health: test.health ? caseHealthJson(test.health) : null,
  quarantined: test.quarantined,
});

/** A run's own fields, as both forms show them. */
export const runFieldsJson = (run: Run) => ({
  id: run.id,
  name: run.name,
  status: statusOf(RunStatus[run.status]),
  finished: run.finished,
  totalTests: run.totalTests,
  passedTests: run.passedTests,
  failedTests: run.failedTests,
  flakyTests: run.flakyTests,
  startedAt: rfc3339(run.startedAt),
  finishedAt: rfc3339(run.finishedAt),
  durationMs: durationOf(run.durationMs),
  skipReason: skipReasons[run.skipReason] ?? null,
  url: run.url,
  newFailures: run.newFailures ?? null,
  baseRunId: run.baseRunId ?? null,
  quarantinedFailures: run.quarantinedFailures,
});

/** A run as GET /v1/runs/:id shows it (with its tests); `origin` as for testResultJson. */
export const runJson = (run: Run, origin: string) => ({
  ...runFieldsJson(run),
  tests: run.tests.map((test) => testResultJson(test, origin)),
});
