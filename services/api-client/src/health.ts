// The JSON of test health and quarantine (docs/rest-api.md, "Test health and quarantine"), as a
// client sees it: a test result's `health` and GET /v1/test-cases/{id}/history.
import type { FailureCause } from "./causes.js";

/** A case's state in one environment; `quarantined` while a quarantine lasts. */
export type HealthState = "unknown" | "stable" | "flaky" | "failing" | "new_failure" | "quarantined";

/** A rate with its 95% Wilson interval. */
export interface RateEstimate {
  count: number;
  sample: number;
  rate: number;
  low: number;
  high: number;
}

/** One result of a test case: where and when. */
export interface ResultRef {
  runId: string;
  testResultId: string;
  caseVersion: number;
  at: string | null;
}

export interface Quarantine {
  testCaseId: string;
  /** Why it was quarantined. */
  reason: string;
  startedAt: string | null;
  expiresAt: string | null;
  startedByMemberId: string | null;
  endedAt: string | null;
  liftedByMemberId: string | null;
  active: boolean;
}

/** A test case's health in one environment. */
export interface CaseHealth {
  testCaseId: string;
  environmentId: string;
  name: string;
  state: HealthState;
  /** The state its results give, quarantine aside. */
  judged: HealthState;
  caseVersion: number;
  sampleSize: number;
  /** False below the project's minimum: the rates say little yet. */
  enoughResults: boolean;
  failureRate: RateEstimate;
  flipRate: RateEstimate;
  failingSince: ResultRef | null;
  lastFailure: ResultRef | null;
  lastResult: ResultRef | null;
  medianDurationMs: number;
  p90DurationMs: number;
  previousMedianDurationMs: number;
  resultsTotal: number;
  failuresTotal: number;
  /** Newest first: p passed, r passed on retry, f failed. */
  outcomes: string;
  quarantine: Quarantine | null;
}

/** One entry of GET /v1/test-cases/{id}/history. */
export interface HistoryEntry {
  testResultId: string;
  runId: string;
  runName: string;
  environmentId: string;
  testPlanId: string | null;
  caseVersion: number;
  status: "PASSED" | "FAILED" | "SKIPPED";
  flaky: boolean;
  cause: FailureCause | null;
  durationMs: number | null;
  summary: string;
  finishedAt: string | null;
  attempts: number;
  startedBy: { kind: "key" | "member" | "schedule" | "unknown"; id: string | null };
  quarantined: boolean;
  url: string;
}

/** GET /v1/test-cases/{id}/history. */
export interface TestCaseHistory {
  entries: HistoryEntry[];
  nextCursor: string | null;
  health: CaseHealth[];
}
