// Exit codes of `testrun` (docs/pipelines.md, "Exit codes"): what a pipeline step reports.
import type { Run } from "@testrun/api-client";
import { flakyTests } from "./attempts.js";

export const ExitCode = {
  /** The run passed (or was skipped, with --allow-skipped); any other command succeeded. */
  passed: 0,
  /** The run finished and a test failed (or, with --fail-on-flaky, passed only on retry). */
  failed: 1,
  /** The run was skipped (environment unreachable, cancelled, no executor). */
  skipped: 2,
  /** The wait timed out before the run finished. */
  timedOut: 3,
  /** The run could not be started or followed: 401, 403, 402, 404, 409, 4xx, network, 5xx. */
  notStarted: 4,
  /** The command line was wrong, or TESTRUN_URL / TESTRUN_API_KEY are not set. */
  usage: 5,
} as const;

/** Signals end the process with the shell's convention, 128 + the signal's number. */
export const signalExitCode: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * The exit code of a finished run. A run that passed with tests that passed only on retry (flaky)
 * passed, unless `failOnFlaky` (--fail-on-flaky): then it is a failure.
 */
export function exitCodeOf(run: Run, allowSkipped: boolean, failOnFlaky = false): number {
  switch (run.status) {
    case "PASSED":
      return failOnFlaky && flakyTests(run.tests).length > 0 ? ExitCode.failed : ExitCode.passed;
    case "FAILED":
      return ExitCode.failed;
    case "SKIPPED":
      return allowSkipped ? ExitCode.passed : ExitCode.skipped;
    default:
      return ExitCode.timedOut;
  }
}
