// Writing what a run ends with: --json (the run as the API returned it), --junit, and the Markdown
// summary appended to $GITHUB_STEP_SUMMARY. A report that cannot be written is said on stderr; the
// exit code stays the run's.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Run } from "@testrun/api-client";
import { type ComparisonReport, comparisonMarkdown } from "./comparison.js";
import { type JunitOptions, junitXml } from "./junit.js";
import type { Output } from "./progress.js";
import { markdownSummary } from "./summary.js";

export interface ReportTargets {
  junit?: string;
  json?: string;
  /** $GITHUB_STEP_SUMMARY */
  stepSummary?: string;
}

export function writeReports(
  run: Run,
  targets: ReportTargets,
  io: { stdout: Output; stderr: Output },
  options: JunitOptions & { comparison?: ComparisonReport } = {},
): void {
  const attempt = (what: string, file: string, write: () => void) => {
    try {
      if (file !== "-") mkdirSync(dirname(file), { recursive: true });
      write();
    } catch (error) {
      io.stderr.write(`testrun: could not write ${what} ${file}: ${(error as Error).message}\n`);
    }
  };
  if (targets.json) {
    const json = `${JSON.stringify(run, null, 2)}\n`;
    const file = targets.json;
    attempt("--json", file, () => (file === "-" ? io.stdout.write(json) : writeFileSync(file, json)));
  }
  if (targets.junit) {
    const file = targets.junit;
    attempt("--junit", file, () => writeFileSync(file, junitXml(run, options)));
  }
  if (targets.stepSummary) {
    const file = targets.stepSummary;
    attempt("the step summary", file, () =>
      appendFileSync(
        file,
        markdownSummary(run, { ...(options.timedOut && { timedOut: true }) }) +
          (options.comparison ? comparisonMarkdown(options.comparison) : ""),
      ),
    );
  }
}
