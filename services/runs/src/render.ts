import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Step, StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import {
  type Artifact,
  ArtifactKind,
  ArtifactSchema,
  type Run,
  RunSchema,
  RunStatus,
  SkipReason,
  type TestResult,
  TestResultSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { dbDate, dbDateOrNull } from "@testrun/kit";
import type {
  ArtifactKind as StoredArtifactKind,
  SkipReason as StoredSkipReason,
  RunStatus as StoredStatus,
  StoredStepResult,
} from "./db/entities.js";
import { testKindOf } from "./dispatcher.js";
import type { ExecutorKinds } from "./executor-kinds.js";
import type { ArtifactRow, RunRow, TestRow } from "./rows.js";

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

export const toRunStatus = (status: StoredStatus): RunStatus => runStatuses[status];

/** Builds the web application's links (docs/rest-api.md: `{APP_URL}/projects/{projectId}/runs/{runId}`). */
export class Links {
  private readonly base: string;
  constructor(appUrl: string) {
    this.base = appUrl.replace(/\/+$/, "");
  }
  run(projectId: string, runId: string): string {
    return `${this.base}/projects/${encodeURIComponent(projectId)}/runs/${encodeURIComponent(runId)}`;
  }
  test(projectId: string, runId: string, testResultId: string): string {
    return `${this.run(projectId, runId)}/tests/${encodeURIComponent(testResultId)}`;
  }
}

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
});

/**
 * A test as the API shows it. `kinds` (what the executors say of each kind) fills what a QUEUED test
 * waits for, in the reads that show it to a user (GetRun, GetTestResult, WatchRun).
 */
export function renderTest(row: TestRow, projectId: string, links: Links, kinds?: ExecutorKinds): TestResult {
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
    artifacts: (row.artifacts ?? []).map(renderArtifact),
    stepResults: row.step_results.map(renderStepResult),
    waitingFor: (row.status === "queued" && kinds?.waitingFor(testKindOf(row.steps))) || "",
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
  });
}
