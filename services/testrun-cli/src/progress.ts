// What a waiting `testrun` prints: on a CI log (not a terminal) one line per change; on a terminal
// the same lines for finished tests and one live status line kept up to date below them.
import { failureScreenshot, type Run, type TestResult } from "@testrun/api-client";
import { attemptLine, causeText, earlierFailures, flakyTests, isFlaky, isSystemCause } from "./attempts.js";
import { formatDuration } from "./duration.js";
import { healthText, isQuarantinedFailure, quarantinedFailures } from "./health.js";

export interface Output {
  write(text: string): void;
  /** A terminal: the live line is redrawn in place. */
  isTTY?: boolean;
}

const final = new Set(["PASSED", "FAILED", "SKIPPED"]);

/**
 * One finished test, as a line; a test that took more than one attempt has a line more under it
 * for each earlier attempt that failed, with its cause. A pass on retry is "PASSED on retry
 * (flaky)"; a failure after retries, or by the system's cause, names its cause.
 */
export function testLine(test: TestResult): string {
  const duration = test.durationMs === null ? "" : ` (${formatDuration(test.durationMs)})`;
  const summary = test.status === "PASSED" || !test.summary ? "" : `: ${test.summary}`;
  const earlier = earlierFailures(test);
  // A quarantined case's failure is its true status, marked: it does not fail the run.
  const status = isFlaky(test)
    ? "PASSED on retry (flaky)"
    : isQuarantinedFailure(test)
      ? "FAILED (quarantined)"
      : test.status.padEnd(7);
  const cause =
    test.status === "FAILED" && test.cause && (earlier.length > 0 || isSystemCause(test.cause))
      ? ` [${causeText(test.cause)}]`
      : "";
  const attempts = earlier.map((attempt) => `\n    ${attemptLine(attempt)}`).join("");
  // Its case's health beside it: whether the failure is new, known flaky, or failing since when.
  const health = healthText(test);
  const note = health ? ` (${health})` : "";
  return `  ${status} ${test.name}${duration}${summary}${cause}${note}${attempts}`;
}

/** The warning a run with tests that passed only on retry ends with; undefined without any. */
export function flakyWarning(run: Run, failOnFlaky: boolean): string | undefined {
  const flaky = flakyTests(run.tests);
  if (!flaky.length) return undefined;
  const names = flaky.map((test) => `"${test.name}"`).join(", ");
  const counted = flaky.length === 1 ? "1 test" : `${flaky.length} tests`;
  return failOnFlaky
    ? `Warning: ${counted} passed only on retry (flaky): ${names}; --fail-on-flaky makes that a failure (exit 1)`
    : `Warning: ${counted} passed only on retry (flaky): ${names}; the run still counts as passed (--fail-on-flaky fails it)`;
}

/** A failed test's screenshot (its failure screenshot, else its first) as a line, if it has one. */
export function screenshotLine(test: TestResult): string | undefined {
  const screenshot = failureScreenshot(test);
  return screenshot && `    screenshot: ${screenshot.url}`;
}

/** A failed test as the end of a wait lists it: its line, its page, and what the browser saw. */
export function failureLines(test: TestResult): string[] {
  const screenshot = screenshotLine(test);
  return [testLine(test), `    ${test.url}`, ...(screenshot ? [screenshot] : [])];
}

/** The run's state in one line: status and counts. */
export function statusLine(run: Run): string {
  const done = run.tests.filter((test) => final.has(test.status)).length;
  const skipped = run.tests.filter((test) => test.status === "SKIPPED").length;
  // A flaky pass counts as passed (the API's passedTests) and is named beside it.
  const flaky = run.flakyTests ?? flakyTests(run.tests).length;
  const passed = flaky ? `${run.passedTests} passed (${flaky} flaky)` : `${run.passedTests} passed`;
  // Quarantined failures count in failedTests (the API's) and are named beside it.
  const quarantined = run.quarantinedFailures ?? quarantinedFailures(run.tests).length;
  const failed = quarantined
    ? `${run.failedTests} failed (${quarantined} quarantined)`
    : `${run.failedTests} failed`;
  const counts = `${passed}, ${failed}${skipped ? `, ${skipped} skipped` : ""}`;
  if (run.finished) {
    const duration = run.durationMs === null ? "" : ` in ${formatDuration(run.durationMs)}`;
    const reason = run.skipReason ? ` (${run.skipReason})` : "";
    return `${run.status}${reason}: ${counts} of ${run.totalTests}${duration}`;
  }
  return `${run.status}: ${done} of ${run.totalTests} done, ${counts}`;
}

export class Progress {
  private readonly reported = new Set<string>();
  private lastLine = "";
  private live = "";
  private ticker: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();

  constructor(private readonly out: Output) {}

  /** Prints what changed since the last update. */
  update(run: Run): void {
    for (const test of run.tests) {
      if (!final.has(test.status) || this.reported.has(test.id)) continue;
      this.reported.add(test.id);
      this.print(testLine(test));
    }
    const line = statusLine(run);
    if (this.out.isTTY && !run.finished) {
      this.live = line;
      this.draw();
      if (!this.ticker && !run.finished) {
        // The elapsed time moves even when the run does not.
        this.ticker = setInterval(() => this.draw(), 1000);
        this.ticker.unref();
      }
    } else if (line !== this.lastLine && !run.finished) {
      this.out.write(`${line}\n`);
    }
    this.lastLine = line;
    if (run.finished) this.stop();
  }

  /** A line of its own (a retry, a note), above the live line. */
  print(line: string): void {
    if (this.out.isTTY && this.live) this.out.write("\r\x1b[2K");
    this.out.write(`${line}\n`);
    if (this.out.isTTY && this.live) this.draw();
  }

  /** Ends the live line (it stays on screen as the last state). */
  stop(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    if (this.out.isTTY && this.live) this.out.write("\r\x1b[2K");
    this.live = "";
  }

  private draw(): void {
    const ms = Date.now() - this.startedAt;
    const elapsed = ms < 60_000 ? `${Math.floor(ms / 1000)}s` : formatDuration(ms);
    this.out.write(`\r\x1b[2K${this.live} · waiting ${elapsed}`);
  }
}
