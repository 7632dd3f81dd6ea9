// A test's attempts as `testrun` tells them (docs/pipelines.md, "Retries and flaky tests"): which
// earlier attempts failed and why, the system's causes named as the system's fault.
import type { TestAttempt, TestResult } from "@testrun/api-client";

/** Causes that are the system's (its browser, its executors), not the test's or the application's. */
const systemCauses = new Set(["browser", "executor_lost", "no_executor"]);

export const isSystemCause = (cause: string | null | undefined): boolean =>
  cause !== null && cause !== undefined && systemCauses.has(cause);

/** A cause as a person reads it: `assertion`, `executor_lost (the system's fault)`. */
export const causeText = (cause: string | null | undefined): string =>
  !cause ? "no cause given" : isSystemCause(cause) ? `${cause} (the system's fault)` : cause;

/** The attempts before the last that FAILED, oldest first (older gateways: none). */
export function earlierFailures(test: TestResult): TestAttempt[] {
  const attempts = test.attempts ?? [];
  return attempts.slice(0, -1).filter((attempt) => attempt.status === "FAILED");
}

/** PASSED after a failed attempt of its own cause (the API's `flaky`). */
export const isFlaky = (test: TestResult): boolean => test.status === "PASSED" && test.flaky === true;

/** The run's tests that passed only on retry. */
export const flakyTests = (tests: readonly TestResult[]): TestResult[] => tests.filter(isFlaky);

/** "attempt 1 FAILED, assertion: step 1 …": one earlier failed attempt, as a line of its own. */
export const attemptLine = (attempt: TestAttempt): string =>
  `attempt ${attempt.number} FAILED, ${causeText(attempt.cause)}${attempt.summary ? `: ${attempt.summary}` : ""}`;
