import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Step, StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import {
  type Artifact,
  ArtifactKind,
  ArtifactSchema,
  FailureCause,
  type Run,
  RunSchema,
  RunStatus,
  SkipReason,
  type TestAttempt,
  TestAttemptSchema,
  type TestResult,
  TestResultSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { type DbTimestamp, dbDate, dbDateOrNull } from "@testrun/kit";
import { failureCauses } from "./causes.js";
import type {
  ArtifactKind as StoredArtifactKind,
  StoredAttempt,
  FailureCause as StoredCause,
  SkipReason as StoredSkipReason,
  RunStatus as StoredStatus,
  StoredStepResult,
} from "./db/entities.js";
import { kindOfTest } from "./dispatcher.js";
import type { ExecutorKinds } from "./executor-kinds.js";
import { renderGroupBrief } from "./failures/render.js";
import { renderCaseHealth } from "./health/render.js";
import type { Links } from "./links.js";
import { type ArtifactRow, isFinal, type RunRow, type TestRow } from "./rows.js";

const runStatuses: Record<StoredStatus, RunStatus> = {
  queued: RunStatus.QUEUED,
  running: RunStatus.RUNNING,
  passed: RunStatus.PASSED,
  failed: RunStatus.FAILED,
  skipped: RunStatus.SKIPPED,
};

export const testStatuses: Record<StoredStatus, TestStatus> = {
  queued: TestStatus.QUEUED,
  running: TestStatus.RUNNING,
  passed: TestStatus.PASSED,
  failed: TestStatus.FAILED,
  skipped: TestStatus.SKIPPED,
};

const skipReasons: Record<StoredSkipReason, SkipReason> = {
  environment_unreachable: SkipReason.ENVIRONMENT_UNREACHABLE,
  cancelled: SkipReason.CANCELLED,
  no_executor: SkipReason.NO_EXECUTOR,
};

export const artifactKinds: Record<StoredArtifactKind, ArtifactKind> = {
  screenshot: ArtifactKind.SCREENSHOT,
  trace: ArtifactKind.TRACE,
  browser_log: ArtifactKind.BROWSER_LOG,
  http_response: ArtifactKind.HTTP_RESPONSE,
};

const causeOf = (cause: StoredCause | null) => (cause ? failureCauses[cause] : FailureCause.UNSPECIFIED);

export const toRunStatus = (status: StoredStatus): RunStatus => runStatuses[status];

const stamp = (value: Date | null) => (value ? timestampFromDate(value) : undefined);

/** An artifact's metadata as the API shows it (without its bytes). */
export const renderArtifact = (row: ArtifactRow): Artifact =>
  create(ArtifactSchema, {
    id: row.id,
    kind: artifactKinds[row.kind],
    name: row.name,
    contentType: row.content_type,
    sizeBytes: BigInt(row.size_bytes),
    step: row.step,
    createdAt: timestampFromDate(dbDate(row.created_at)),
    testResultId: row.test_result_id,
    runId: row.run_id,
  });

const renderStepResult = (step: StoredStepResult) => ({
  number: step.number,
  status: testStatuses[step.status],
  durationMs: BigInt(step.duration_ms),
  name: step.name ?? "",
  error: step.error ?? "",
});

/**
 * A test's attempts, oldest first: the ended ones it keeps apart, then its current or last one
 * (its own columns, in the stored attempt's shape), each with its artifacts (`artifacts`: the
 * test's, of every ended attempt).
 */
function renderAttempts(row: TestRow, artifacts: Artifact[], artifactRows: ArtifactRow[]): TestAttempt[] {
  const stored: (Omit<StoredAttempt, "status" | "lease_token" | "started_at" | "finished_at"> & {
    status: StoredStatus;
    started_at: DbTimestamp | null;
    finished_at: DbTimestamp | null;
  })[] = [...row.earlier_attempts];
  // The current or last attempt: none while never claimed, nor while QUEUED again (the attempt
  // its number names ended and is among the earlier ones).
  if (row.attempt > 0 && row.status !== "queued")
    stored.push({
      number: row.attempt,
      status: row.status,
      started_at: row.started_at,
      finished_at: row.finished_at,
      duration_ms: row.duration_ms,
      summary: row.summary ?? "",
      failed_step: row.failed_step,
      step_results: row.step_results,
      cause: row.cause,
      executor_id: row.lease_owner,
    });
  return stored.map((attempt) =>
    create(TestAttemptSchema, {
      number: attempt.number,
      status: testStatuses[attempt.status],
      startedAt: stamp(dbDateOrNull(attempt.started_at)),
      finishedAt: stamp(dbDateOrNull(attempt.finished_at)),
      durationMs: attempt.duration_ms === null ? undefined : BigInt(attempt.duration_ms),
      summary: attempt.summary,
      failedStep: attempt.failed_step ?? undefined,
      stepResults: attempt.step_results.map(renderStepResult),
      cause: causeOf(attempt.cause),
      executorId: attempt.executor_id ?? "",
      artifacts: artifacts.filter((_, index) => artifactRows[index]?.attempt === attempt.number),
    }),
  );
}

/**
 * A test as the API shows it. `kinds` (what the executors say of each kind) fills what a QUEUED test
 * waits for, in the reads that show it to a user (GetRun, GetTestResult, WatchRun).
 */
export function renderTest(row: TestRow, projectId: string, links: Links, kinds?: ExecutorKinds): TestResult {
  const artifactRows = row.artifacts ?? [];
  const artifacts = artifactRows.map(renderArtifact);
  return create(TestResultSchema, {
    id: row.id,
    testCaseId: row.test_case_id,
    testCaseVersion: row.test_case_version,
    name: row.name,
    status: testStatuses[row.status],
    durationMs: row.duration_ms === null ? undefined : BigInt(row.duration_ms),
    summary: row.summary ?? "",
    url: links.test(projectId, row.run_id, row.id),
    attempt: row.attempt,
    // A QUEUED test (never claimed, or handed back) has no current attempt executing.
    startedAt: row.status === "queued" ? undefined : stamp(dbDateOrNull(row.started_at)),
    finishedAt: stamp(dbDateOrNull(row.finished_at)),
    runId: row.run_id,
    // Stored only for a FAILED test that failed at a step (0 is never stored).
    failedStep: row.failed_step ?? undefined,
    // The last attempt's, once the test is final.
    artifacts: isFinal(row.status)
      ? artifacts.filter((_, i) => artifactRows[i]?.attempt === row.attempt)
      : [],
    stepResults: row.step_results.map(renderStepResult),
    waitingFor: (row.status === "queued" && kinds?.waitingFor(kindOfTest(row))) || "",
    flaky: row.flaky,
    cause: row.status === "failed" ? causeOf(row.cause) : FailureCause.UNSPECIFIED,
    attempts: renderAttempts(row, artifacts, artifactRows),
    retries: row.retries,
    ...(row.health && { health: renderCaseHealth(row.health, row.quarantine) }),
    quarantined: row.quarantined,
    ...(row.failure_group && { failureGroup: renderGroupBrief(row.failure_group) }),
    newFailure: row.new_failure,
  });
}

/** A test's steps as the run took them from its test case (stored as JSON). */
export const renderSteps = (row: TestRow): Step[] =>
  row.steps.map((step) => fromJson(StepSchema, step as JsonValue));

/** The API shape of a run; `tests` undefined leaves them out (ListRuns); `kinds` as for renderTest. */
export function renderRun(
  row: RunRow,
  tests: TestRow[] | undefined,
  links: Links,
  kinds?: ExecutorKinds,
): Run {
  const startedAt = dbDateOrNull(row.started_at);
  const finishedAt = dbDateOrNull(row.finished_at);
  return create(RunSchema, {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    status: runStatuses[row.status],
    finished: finishedAt !== null,
    totalTests: row.total_tests,
    passedTests: row.passed_tests,
    failedTests: row.failed_tests,
    skippedTests: row.skipped_tests,
    startedAt: stamp(startedAt),
    finishedAt: stamp(finishedAt),
    durationMs:
      startedAt && finishedAt ? BigInt(Math.max(0, finishedAt.getTime() - startedAt.getTime())) : undefined,
    skipReason: row.skip_reason ? skipReasons[row.skip_reason] : SkipReason.UNSPECIFIED,
    url: links.run(row.project_id, row.id),
    environmentId: row.environment_id,
    testPlanId: row.test_plan_id ?? undefined,
    createdAt: timestampFromDate(dbDate(row.created_at)),
    tests: (tests ?? []).map((test) => renderTest(test, row.project_id, links, kinds)),
    startedByKeyId: row.started_by_key_id ?? undefined,
    startedByMemberId: row.started_by_member_id ?? undefined,
    version: BigInt(row.version),
    flakyTests: row.flaky_tests,
    quarantinedFailures: row.quarantined_failures,
    newFailures: row.new_failures ?? undefined,
    baseRunId: row.base_run_id ?? undefined,
  });
}
