// Retries of a failed attempt (catalog.proto TestCase.retries, TestPlan.retries): what the test case
// and test plan forms offer and say about them.

/** Every count a test case or plan may ask for: 0 to 3. */
export const retryCounts = [0, 1, 2, 3] as const;

/** The help text the forms show under the field. */
export const retriesHint =
  "A failed attempt is run again up to this many times; a pass on retry marks the test flaky.";

/** An option's text: "No retries", "1 retry", "2 retries". */
export const retriesLabel = (count: number) =>
  count === 0 ? "No retries" : count === 1 ? "1 retry" : `${count} retries`;
