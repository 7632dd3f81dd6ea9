// The Markdown summary appended to $GITHUB_STEP_SUMMARY (GitHub shows it on the job's page).
import type { Run } from "@testrun/api-client";
import { attemptLine, earlierFailures, isFlaky } from "./attempts.js";
import { formatDuration } from "./duration.js";
import { healthText, isQuarantinedFailure, quarantinedText } from "./health.js";
import { statusLine } from "./progress.js";

const icons: Record<string, string> = {
  PASSED: "✅",
  FAILED: "❌",
  SKIPPED: "⏭️",
  RUNNING: "⏳",
  QUEUED: "⏳",
};

/** Text safe in a table cell: no pipes, line breaks or HTML. */
export const cell = (text: string) =>
  text
    .replace(/[\r\n]+/g, " ")
    .replace(/[<>&]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;" })[c] ?? c)
    .replace(/\|/g, "\\|")
    .replace(/([[\]`*_])/g, "\\$1");

export function markdownSummary(run: Run, options: { timedOut?: boolean } = {}): string {
  const heading = `### ${icons[run.status] ?? ""} Testrun: [${cell(run.name)}](${run.url}) ${run.status}`;
  const state = options.timedOut
    ? `${statusLine(run)} (the wait timed out; the run goes on)`
    : statusLine(run);
  const rows = run.tests.map((test) => {
    // A pass on retry stands out, with why its earlier attempts failed.
    const flaky = isFlaky(test);
    // A quarantined case's failure does not fail the run: marked so, with why it is quarantined.
    const quarantined = isQuarantinedFailure(test);
    const status = flaky
      ? "⚠️ PASSED on retry (flaky)"
      : quarantined
        ? "🔇 FAILED (quarantined)"
        : `${icons[test.status] ?? ""} ${test.status}`;
    const attempts = earlierFailures(test).map((attempt) => cell(attemptLine(attempt)));
    const health = healthText(test);
    const summary = [
      quarantined ? `**${cell(quarantinedText(test))}**` : "",
      test.status === "PASSED" ? "" : cell(test.summary),
      ...attempts,
      health ? `_${cell(health)}_` : "",
    ].filter(Boolean);
    return `| ${status} | [${cell(test.name)}](${test.url}) | ${
      test.durationMs === null ? "" : formatDuration(test.durationMs)
    } | ${summary.join("<br>")} |`;
  });
  return [
    heading,
    "",
    state,
    "",
    "| status | test | duration | summary |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    "",
  ].join("\n");
}
