// The JSON of the /v1 REST API as a client sees it (docs/rest-api.md).
import type { FailureCause } from "./causes.js";
import type { CaseHealth } from "./health.js";

export type Status = "QUEUED" | "RUNNING" | "PASSED" | "FAILED" | "SKIPPED";

export interface TestResult {
  id: string;
  testCaseId: string;
  name: string;
  status: Status;
  durationMs: number | null;
  summary: string;
  url: string;
  /** What the test produced (browser tests), once it is final. Absent from gateways older than artifacts. */
  artifacts?: Artifact[];
  // The rest is absent from gateways older than attempts (docs/rest-api.md, "Attempts, retries and causes").
  /** The step it FAILED at (its last attempt's); null otherwise. */
  failedStep?: number | null;
  /** PASSED after a failed attempt of its own cause: a pass on retry. */
  flaky?: boolean;
  /** A FAILED test's last attempt's cause (`assertion`, `executor_lost`, …); null otherwise. */
  cause?: FailureCause | null;
  /** How many times a failed attempt is retried (0 to 3). */
  retries?: number;
  /** Every attempt, oldest first; the last one's outcome is the test's. */
  attempts?: TestAttempt[];
  /** Its test case's health in the run's environment as of the read (absent from gateways older than test health). */
  health?: CaseHealth | null;
  /** Its test case was quarantined when the run started: a failure does not fail the run. */
  quarantined?: boolean;
  // Absent from gateways older than failure groups (docs/rest-api.md, "Failure groups").
  /** FAILED while its case did not fail in the run's base run. */
  newFailure?: boolean;
  /** A FAILED test's failure group (its last attempt's); null otherwise. */
  failureGroup?: {
    id: string;
    occurrences: number;
    casesAffected: number;
    firstSeenRunId: string;
    firstSeenAt: string | null;
  } | null;
}

export type { FailureCause } from "./causes.js";

/** One attempt of a test (an executor's claim of it) and how it ended. */
export interface TestAttempt {
  number: number;
  status: Status;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  summary: string;
  failedStep: number | null;
  /** `name` and `error`: a Playwright spec's `test()` (null for a steps test's step). */
  stepResults: {
    number: number;
    status: Status;
    durationMs: number;
    name: string | null;
    error: string | null;
  }[];
  cause: FailureCause | null;
  /** The executor that ran it; null when not known. */
  executor: string | null;
  artifacts: Artifact[];
}

/**
 * A file a test produced: a screenshot, a Playwright trace, the browser's log or what a failed HTTP
 * step got (docs/rest-api.md, "Artifacts").
 */
export interface Artifact {
  id: string;
  kind: "screenshot" | "trace" | "browser_log" | "http_response";
  /** The screenshot step's name, `failure`, `trace`, `browser-log` or `http-response`. */
  name: string;
  contentType: string;
  size: number;
  /** The number of the step it was taken at; 0 for the whole test. */
  step: number;
  /** GET /v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId} under the API's public origin: the bytes, to a key of the project. */
  url: string;
}

/** A run as GET /v1/runs/:id and POST /v1/runs answer it. */
export interface Run {
  id: string;
  name: string;
  status: Status;
  finished: boolean;
  totalTests: number;
  passedTests: number;
  failedTests: number;
  /** Tests that passed on retry (counted in passedTests too). Absent from gateways older than attempts. */
  flakyTests?: number;
  /** FAILED tests that were quarantined (counted in failedTests too; the status leaves them out). */
  quarantinedFailures?: number;
  /** Once finished: FAILED tests whose case did not fail in the base run; null without a base. Absent from older gateways. */
  newFailures?: number | null;
  /** Once finished: the base run newFailures is counted against; null without one. */
  baseRunId?: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  /** `environment_unreachable`, `cancelled`, `no_executor`; null unless SKIPPED. */
  skipReason: string | null;
  url: string;
  tests: TestResult[];
}

/** An element of GET /v1/runs: the run without its tests, plus where it came from. */
export interface RunListItem extends Omit<Run, "tests"> {
  environmentId: string;
  testPlanId: string | null;
  createdAt: string;
}

export interface Environment {
  id: string;
  name: string;
  baseUrl: string;
  isDefault: boolean;
}

export interface TestPlan {
  id: string;
  name: string;
  description: string;
  testCaseCount: number;
  /** Retries of a failed attempt of each of its test cases (0 to 3); null: each test case's own. */
  retries: number | null;
}

export interface TestCase {
  id: string;
  name: string;
  tags: string[];
  enabled: boolean;
  /** Retries of a failed attempt (0 to 3). */
  retries: number;
}

export interface Project {
  project: { id: string; name: string; createdAt: string };
  environments: Environment[];
  testPlans: TestPlan[];
}

/** The body of POST /v1/runs: exactly one of testPlan, testCaseIds, tags. */
export interface StartRunBody {
  environment?: string;
  testPlan?: string;
  testCaseIds?: string[];
  tags?: string[];
  name?: string;
  /** Retries of a failed attempt of each test (0 to 3), replacing the plan's and each test case's. */
  retries?: number;
}

/** Every error body: a message and a machine code, plus the extras of some codes. */
export interface ErrorBody {
  error: string;
  code?: string;
  /** 402 insufficient_credits */
  required?: number;
  available?: number;
  /** 409 ambiguous_name */
  candidates?: string[];
  /** 500 of a run started but not read back */
  id?: string;
  url?: string;
  /** 400 of POST /v1/content/import: each bad field of the document, by its path there. */
  violations?: { field: string; problem: string }[];
}

/** What POST /v1/content/import did (or, for a dry run, would do) with one item of the document. */
export interface ImportedItem {
  /** Where it sits in the document: `testCases[0]`. */
  path: string;
  name: string;
  /** The matched item's id, or the new one's; absent for an item a dry run would create. */
  id?: string;
  outcome: "created" | "changed" | "unchanged" | "unknown";
  /** For `changed`: the document's fields that differ (`playwright`, `tags`…). */
  changedFields?: string[];
}

/** The answer of POST /v1/content/import (docs/rest-api.md, "Importing content"). */
export interface ImportResult {
  /** False for a dry run: nothing was written. */
  applied: boolean;
  testCases: ImportedItem[];
  testPlans: ImportedItem[];
  environments: ImportedItem[];
  variables: ImportedItem[];
  variablesWithoutValue: string[];
  /** The project's test cases the document does not hold: left as they are. */
  otherTestCases: number;
  otherTestPlans: number;
}
