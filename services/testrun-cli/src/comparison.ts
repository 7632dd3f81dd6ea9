// What a finished run is against its base (docs/pipelines.md, "New failures"): the last line
// `testrun` prints ("2 new failures, 1 still failing (since run X), 1 flaky — compare: URL"), the
// same in the job summary, and --fail-on new-failures, which fails the job only for failures that
// are new against the base. Read from GET /v1/runs/{id}/comparison.
import type { Run, RunComparison } from "@testrun/api-client";
import { cell } from "./summary.js";

/** What the comparison says, as the CLI reports it. */
export interface ComparisonReport {
  /** The run's last line. */
  line: string;
  /** Tests FAILED now whose case did not fail in the base (newly failing, or new and failing). */
  newFailures: number;
  /** Whether there was a base to compare with. */
  hasBase: boolean;
  /** The names of the new failures, in the comparison's order (newly failing first). */
  newFailureNames: string[];
  compareUrl: string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The run FAILED tests that are new against the base: newly failing, and new tests that failed. */
const isNewFailure = (test: RunComparison["tests"][number]) =>
  test.status === "FAILED" && (test.change === "newly_failing" || test.change === "new_test");

/** The report of a comparison of `run` (finished) with its base. */
export function comparisonReport(run: Run, comparison: RunComparison): ComparisonReport {
  const compareUrl = comparison.compareUrl || `${run.url}/compare`;
  if (comparison.baseRule === "none" || !comparison.base) {
    return {
      line: `No base run to compare with — ${run.url}`,
      newFailures: run.tests.filter((t) => t.status === "FAILED").length,
      hasBase: false,
      newFailureNames: run.tests.filter((t) => t.status === "FAILED").map((t) => t.name),
      compareUrl,
    };
  }
  const fresh = comparison.tests.filter(isNewFailure);
  const still = comparison.tests.filter((t) => t.change === "still_failing");
  // Run ids sort by time: the smallest is the run the oldest of the current failures began in.
  const since = still
    .map((t) => t.failingSinceRunId)
    .filter((id): id is string => Boolean(id))
    .sort()[0];
  const parts = [
    plural(fresh.length, "new failure", "new failures"),
    `${still.length} still failing${still.length && since ? ` (since run ${since})` : ""}`,
    `${comparison.counts.flaky} flaky`,
  ];
  if (comparison.counts.fixed) parts.push(`${comparison.counts.fixed} fixed`);
  return {
    line: `${parts.join(", ")} against run ${comparison.base.id} — compare: ${compareUrl}`,
    newFailures: fresh.length,
    hasBase: true,
    newFailureNames: fresh.map((t) => t.name),
    compareUrl,
  };
}

/** The report when the comparison could not be read: said, and every failure counted as new. */
export function unknownComparison(run: Run, reason: string): ComparisonReport {
  const failed = run.tests.filter((t) => t.status === "FAILED");
  return {
    line: `Could not compare with the base run (${reason}): every failure counts as new`,
    newFailures: failed.length,
    hasBase: false,
    newFailureNames: failed.map((t) => t.name),
    compareUrl: `${run.url}/compare`,
  };
}

/**
 * The exit code with --fail-on new-failures: a run that failed only with failures its base had
 * too (still failing) exits 0, with a warning; any new failure keeps the run's code (1). Anything
 * but a failed run keeps its code.
 */
export function newFailuresOnlyExit(
  code: number,
  run: Run,
  report: ComparisonReport,
): { code: number; warning?: string } {
  if (run.status !== "FAILED" || report.newFailures > 0) return { code };
  const failed = run.tests.filter((t) => t.status === "FAILED").length;
  return {
    code: 0,
    warning: `Warning: ${plural(failed, "test", "tests")} failed, none of them new against the base run: exit 0 (--fail-on new-failures)`,
  };
}

/** The comparison for the job summary (Markdown), after the run's table. */
export function comparisonMarkdown(report: ComparisonReport): string {
  const names = report.newFailureNames.slice(0, 20).map((name) => `- ${cell(name)}`);
  if (report.newFailureNames.length > 20) names.push(`- … and ${report.newFailureNames.length - 20} more`);
  const heading = report.hasBase
    ? `**Against the base run:** ${cell(report.line.replace(/ — compare: .*$/, ""))} ([compare](${report.compareUrl}))`
    : `**${cell(report.line)}**`;
  return [
    heading,
    "",
    ...(report.hasBase && names.length ? ["New failures:", "", ...names, ""] : []),
    "",
  ].join("\n");
}
