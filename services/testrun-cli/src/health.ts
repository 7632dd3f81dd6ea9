// A test's health and quarantine as `testrun` tells them (docs/pipelines.md, "Test health and
// quarantine"): the state of its test case beside its result ("new failure", "known flaky: 4 of 30
// failed"), and the failures of quarantined cases, which do not fail the run (the API's
// `quarantined`; decisions: the run's status leaves them out, `testrun` exits 0 and names them).
import type { Run, TestResult } from "@testrun/api-client";

/** A FAILED test whose case was quarantined when the run started: counted, not failing the run. */
export const isQuarantinedFailure = (test: TestResult): boolean =>
  test.status === "FAILED" && test.quarantined === true;

/** The run's failures that fail it: those of cases not quarantined. */
export const failingTests = (tests: readonly TestResult[]): TestResult[] =>
  tests.filter((test) => test.status === "FAILED" && !isQuarantinedFailure(test));

export const quarantinedFailures = (tests: readonly TestResult[]): TestResult[] =>
  tests.filter(isQuarantinedFailure);

/** Why its case is quarantined, when the read still shows the quarantine (it may have been lifted since). */
export const quarantineReason = (test: TestResult): string | undefined =>
  test.health?.quarantine?.reason || undefined;

/** "quarantined: <reason>", or "quarantined" alone when the reason is no longer shown. */
export const quarantinedText = (test: TestResult): string => {
  const reason = quarantineReason(test);
  return reason ? `quarantined: ${reason}` : "quarantined";
};

/**
 * Its test case's state beside its result, or undefined when there is nothing to say (stable, not
 * yet known, or a gateway older than test health). A quarantined case shows the state beneath.
 */
export function healthText(test: TestResult): string | undefined {
  const health = test.health;
  if (!health) return undefined;
  const state = health.state === "quarantined" ? health.judged : health.state;
  const rate = health.failureRate;
  switch (state) {
    case "new_failure":
      return "new failure";
    case "failing": {
      const since = health.failingSince;
      return since ? `failing since run ${since.runId} (case version ${since.caseVersion})` : "failing";
    }
    case "flaky":
      return `known flaky: ${rate.count} of ${rate.sample} failed`;
    default:
      return undefined;
  }
}

/**
 * What a run with quarantined failures ends with: a line counting them, then one per test with its
 * reason and page; none without any.
 */
export function quarantineLines(run: Run): string[] {
  const quarantined = quarantinedFailures(run.tests);
  if (!quarantined.length) return [];
  const counted =
    quarantined.length === 1 ? "1 quarantined failure" : `${quarantined.length} quarantined failures`;
  return [
    `${counted} (not failing the run):`,
    ...quarantined.flatMap((test) => [
      `  ${test.name} — ${quarantineReason(test) ?? "quarantined (no reason shown: lifted since?)"}`,
      `    ${test.url}`,
    ]),
  ];
}
