import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Environment, Project, TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  type Artifact,
  ArtifactKind,
  type Run,
  RunStatus,
  SkipReason,
  type TestResult,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { z } from "zod";
import type {
  artifactSchema,
  environmentSchema,
  projectSchema,
  runListItemSchema,
  runSchema,
  runStatusSchema,
  skipReasonSchema,
  testCaseSchema,
  testPlanSchema,
  testResultSchema,
} from "./api/schemas.js";

/**
 * The JSON of /v1 (docs/rest-api.md, "Resources"): camelCase fields, exactly those the contract
 * lists, and RFC 3339 UTC timestamps with milliseconds. Each answer is typed by its schema in
 * api/schemas.ts, from which the OpenAPI document is generated.
 */

export const rfc3339 = (timestamp: Timestamp | undefined): string | null =>
  timestamp ? timestampDate(timestamp).toISOString() : null;

export const projectJson = (project: Project): z.output<typeof projectSchema> => ({
  id: project.id,
  name: project.name,
  createdAt: rfc3339(project.createdAt) as string,
});

export const environmentJson = (environment: Environment): z.output<typeof environmentSchema> => ({
  id: environment.id,
  name: environment.name,
  baseUrl: environment.baseUrl,
  isDefault: environment.isDefault,
});

export const testPlanJson = (plan: TestPlan): z.output<typeof testPlanSchema> => ({
  id: plan.id,
  name: plan.name,
  description: plan.description,
  testCaseCount: plan.testCaseCount,
});

export const testCaseJson = (testCase: TestCase): z.output<typeof testCaseSchema> => ({
  id: testCase.id,
  name: testCase.name,
  tags: [...testCase.tags],
  enabled: testCase.enabled,
});

const durationOf = (ms: bigint | undefined): number | null => (ms === undefined ? null : Number(ms));

type Status = z.output<typeof runStatusSchema>;
/** A status by its enum name (the names of RunStatus and TestStatus are the contract's). */
const statusOf = (name: string | undefined): Status => name as Status;

const skipReasons: Partial<Record<SkipReason, z.output<typeof skipReasonSchema>>> = {
  [SkipReason.ENVIRONMENT_UNREACHABLE]: "environment_unreachable",
  [SkipReason.CANCELLED]: "cancelled",
  [SkipReason.NO_EXECUTOR]: "no_executor",
};

const artifactKinds: Record<ArtifactKind, z.output<typeof artifactSchema>["kind"] | undefined> = {
  [ArtifactKind.UNSPECIFIED]: undefined,
  [ArtifactKind.SCREENSHOT]: "screenshot",
  [ArtifactKind.TRACE]: "trace",
  [ArtifactKind.BROWSER_LOG]: "browser_log",
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

export const artifactJson = (artifact: Artifact, origin: string): z.output<typeof artifactSchema> => ({
  id: artifact.id,
  kind: artifactKinds[artifact.kind] ?? "screenshot",
  name: artifact.name,
  contentType: artifact.contentType as z.output<typeof artifactSchema>["contentType"],
  size: Number(artifact.sizeBytes),
  step: artifact.step,
  url: artifactUrl(origin, artifact),
});

/** A test result; `origin` is the API's public origin, the base of its artifacts' urls. */
export const testResultJson = (test: TestResult, origin: string): z.output<typeof testResultSchema> => ({
  id: test.id,
  testCaseId: test.testCaseId,
  name: test.name,
  status: statusOf(TestStatus[test.status]),
  durationMs: durationOf(test.durationMs),
  summary: test.summary,
  url: test.url,
  artifacts: test.artifacts
    .filter((artifact) => artifactKinds[artifact.kind] !== undefined)
    .map((artifact) => artifactJson(artifact, origin)),
});

/** A run's own fields, as both forms show them. */
const runFieldsJson = (run: Run) => ({
  id: run.id,
  name: run.name,
  status: statusOf(RunStatus[run.status]),
  finished: run.finished,
  totalTests: run.totalTests,
  passedTests: run.passedTests,
  failedTests: run.failedTests,
  startedAt: rfc3339(run.startedAt),
  finishedAt: rfc3339(run.finishedAt),
  durationMs: durationOf(run.durationMs),
  skipReason: skipReasons[run.skipReason] ?? null,
  url: run.url,
});

/** A run as GET /v1/runs/:id shows it (with its tests); `origin` as for testResultJson. */
export const runJson = (run: Run, origin: string): z.output<typeof runSchema> => ({
  ...runFieldsJson(run),
  tests: run.tests.map((test) => testResultJson(test, origin)),
});

/** A run as an element of GET /v1/runs: without tests, with where it ran and when it was made. */
export const runListJson = (run: Run): z.output<typeof runListItemSchema> => ({
  ...runFieldsJson(run),
  environmentId: run.environmentId,
  testPlanId: run.testPlanId ?? null,
  createdAt: rfc3339(run.createdAt) as string,
});
