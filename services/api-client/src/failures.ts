// The JSON of failure groups and run comparisons (docs/rest-api.md, "Reading a comparison" and
// "Reading failure groups"), as a client sees it.
import type { FailureCause, RunListItem, Status } from "./types.js";

export type TestChange =
  | "newly_failing"
  | "fixed"
  | "still_failing"
  | "flaky"
  | "new_test"
  | "removed_test"
  | "unchanged";

export interface StepChange {
  number: number;
  change: "added" | "removed" | "changed";
  /** The step as each version has it; null when absent. */
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface TestComparison {
  testCaseId: string;
  name: string;
  change: TestChange;
  testResultId: string | null;
  baseTestResultId: string | null;
  status: Status | null;
  baseStatus: Status | null;
  caseVersion: number;
  baseCaseVersion: number;
  stepChanges: StepChange[];
  /** For still_failing: the run its current failures began in, when known. */
  failingSinceRunId: string | null;
  cause: FailureCause | null;
  failureGroupId: string | null;
}

/** GET /v1/runs/:id/comparison */
export interface RunComparison {
  run: RunListItem & { newFailures?: number | null; baseRunId?: string | null };
  base: RunListItem | null;
  baseRule: "named" | "previous" | "none";
  counts: {
    newlyFailing: number;
    fixed: number;
    stillFailing: number;
    flaky: number;
    newTest: number;
    removedTest: number;
    unchanged: number;
  };
  /** The differences first, newly failing first. */
  tests: TestComparison[];
  changes: {
    baseUrl: { before: string; after: string } | null;
    variablesAdded: string[];
    variablesRemoved: string[];
    casesAdded: string[];
    casesRemoved: string[];
  };
  /** Where the comparison opens in the web console. */
  compareUrl: string;
}

export type FailureGroupState = "open" | "resolved" | "reopened";

export interface FailureOccurrence {
  runId: string;
  testResultId: string;
  attempt: number;
  testCaseId: string;
  testCaseName: string;
  caseVersion: number;
  environmentId: string;
  at: string | null;
  summary: string;
  url: string;
}

export interface FailureGroup {
  id: string;
  fingerprint: string;
  stepKind: "http" | "browser";
  action: string;
  target: string;
  cause: FailureCause;
  message: string;
  state: FailureGroupState;
  occurrences: number;
  casesAffected: number;
  firstSeen: FailureOccurrence | null;
  lastSeen: FailureOccurrence | null;
  resolvedAt: string | null;
}

export interface FailureGroupCase {
  testCaseId: string;
  name: string;
  occurrences: number;
  lastSeenAt: string | null;
  open: boolean;
}

/** GET /v1/failure-groups/:id */
export interface FailureGroupDetail {
  failureGroup: FailureGroup;
  occurrences: FailureOccurrence[];
  nextCursor: string | null;
  cases: FailureGroupCase[];
}
