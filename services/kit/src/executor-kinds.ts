import type { TestKind } from "./dispatch.js";

/**
 * What executors report of the kinds of test they take (RunsService.ReportExecutorKinds; docs/
 * runs.md, "Kinds no executor can run"), shared by the executors that report and the runs service
 * that keeps the reports and tells users from them why a test waits or was skipped.
 */

/** How often an executor reports, besides at each change. */
export const kindReportEveryMs = 10_000;
/** How long a report counts after it was made: three reports, so one late or lost one changes nothing. */
export const kindReportTtlMs = 3 * kindReportEveryMs;

/** The longest cause kept (the rest is cut): a summary saying it stays within 300 characters. */
export const kindCauseMaxLength = 200;

/** How a user names the tests of a kind. */
export const kindTestsName: Readonly<Record<TestKind, string>> = {
  http: "HTTP tests",
  browser: "browser tests",
};

/**
 * A cause as it may be shown to a user: one line of printable characters, at most
 * `kindCauseMaxLength`. What an executor reported is not trusted further than that.
 */
export function kindCause(text: string): string {
  // Control and format characters (\p{C}: a line break, a bidi override) become spaces.
  const line = text.replace(/[\p{C}\u2028\u2029\s]+/gu, " ").trim();
  const chars = [...line];
  return chars.length <= kindCauseMaxLength ? line : `${chars.slice(0, kindCauseMaxLength - 1).join("")}…`;
}
