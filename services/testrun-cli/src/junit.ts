// The JUnit XML report (--junit): the format CI test views read (GitHub test reporters, GitLab
// `artifacts:reports:junit`, Jenkins `junit`). One <testsuite> per run and one <testcase> per test;
// a failed test has a <failure> whose message is its summary, a skipped one <skipped>; times are in
// seconds. Only what the Jenkins/Surefire schema allows, in its order.
//
// A test's artifacts go in its <system-out>: with --artifacts, one `[[ATTACHMENT|path]]` line per
// downloaded file, the convention of Jenkins' JUnit attachments plugin that GitLab reads too (it
// shows a test case's first one: the failure screenshot comes first); otherwise their urls.
//
// Retried tests in the rerun format Maven Surefire writes (surefire-test-report-3.0.xsd) and Jenkins
// and GitLab read: a pass on retry (flaky) is a passing <testcase> with one <flakyFailure> per
// failed attempt; a failure after retries is a <failure> (the last attempt, the test's) with one
// <rerunFailure> per earlier failed attempt. Each carries the attempt's summary as `message`, its
// cause as `type`, a <stackTrace> saying which attempt, where it failed and on which executor, and
// a <system-out> with its artifacts, as the test's own.
//
// A failure of a quarantined test case (docs/pipelines.md, "Test health and quarantine") does not
// fail the run: it is a <skipped message="quarantined: <reason>"/>, so CI views do not count it as
// a failure, with the failure's text (its summary, then its earlier attempts) first in its
// <system-out>, where it is still read.
import { artifactsInOrder, type Run, type TestAttempt, type TestResult } from "@testrun/api-client";
import { causeText, earlierFailures, isFlaky, isSystemCause } from "./attempts.js";
import { isQuarantinedFailure, quarantinedText } from "./health.js";

const isSystemCauseOf = (attempt: TestAttempt) => isSystemCause(attempt.cause);

export interface JunitOptions {
  /** The wait timed out: tests not final are errors saying so. */
  timedOut?: boolean;
  /** The downloaded artifacts (--artifacts): their files as the report names them, by artifact id. */
  attachments?: ReadonlyMap<string, string>;
}

/** Text safe in XML content and attribute values; characters XML 1.0 cannot carry are dropped. */
export function escapeXml(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: exactly those are removed
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
      .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&apos;")
      .replace(/\r/g, "&#13;")
      .replace(/\n/g, "&#10;")
      .replace(/\t/g, "&#9;")
  );
}

const attrs = (values: Record<string, string | number | null | undefined>) =>
  Object.entries(values)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([name, value]) => ` ${name}="${escapeXml(String(value))}"`)
    .join("");

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

/** A test's (or attempt's) <system-out> lines: its page, then each artifact as an attachment or its url. */
function output(test: TestResult, attachments: ReadonlyMap<string, string> | undefined): string {
  const lines = [test.url];
  for (const artifact of artifactsInOrder(test)) {
    const file = attachments?.get(artifact.id);
    lines.push(file ? `[[ATTACHMENT|${file}]]` : `${artifact.kind} ${artifact.name}: ${artifact.url}`);
  }
  return lines.map(escapeXml).join("\n");
}

/** An earlier failed attempt as Surefire's <flakyFailure> or <rerunFailure>. */
function rerun(
  element: "flakyFailure" | "rerunFailure",
  test: TestResult,
  attempt: TestAttempt,
  attachments: ReadonlyMap<string, string> | undefined,
): string {
  const at = attempt.failedStep ? `, at step ${attempt.failedStep}` : "";
  const on = attempt.executor ? ` on executor ${attempt.executor}` : "";
  const trace = `attempt ${attempt.number} FAILED (${causeText(attempt.cause)})${at}${on}: ${attempt.summary}`;
  return (
    `      <${element}${attrs({ message: attempt.summary, type: attempt.cause ?? "FAILED" })}>\n` +
    `        <stackTrace>${escapeXml(trace)}</stackTrace>\n` +
    `        <system-out>${output({ ...test, status: "FAILED", artifacts: attempt.artifacts }, attachments)}</system-out>\n` +
    `      </${element}>\n`
  );
}

function testcase(run: Run, test: TestResult, options: JunitOptions): string {
  const timedOut = options.timedOut ?? false;
  const open = `    <testcase${attrs({ name: test.name, classname: run.name, time: seconds(test.durationMs) })}>${testProperties(run, test)}`;
  const summary = test.summary || "";
  let outcome = "";
  const earlier = earlierFailures(test);
  let failureText: string[] = [];
  if (isQuarantinedFailure(test)) {
    outcome = `      <skipped${attrs({ message: quarantinedText(test) })}/>\n`;
    failureText = [
      `FAILED (${quarantinedText(test)}): ${summary}`,
      ...earlier.map(
        (attempt) => `attempt ${attempt.number} FAILED (${causeText(attempt.cause)}): ${attempt.summary}`,
      ),
    ];
  } else if (test.status === "FAILED") {
    outcome =
      `      <failure${attrs({ message: summary, type: "FAILED" })}>${escapeXml(`${summary}\n${test.url}`)}</failure>\n` +
      earlier.map((attempt) => rerun("rerunFailure", test, attempt, options.attachments)).join("");
  } else if (isFlaky(test)) {
    // Only a pass after a failure of the test's own is flaky: the system's failures before a
    // pass (a lost executor, a browser that failed) are not the test's and are left out.
    outcome = earlier
      .filter((attempt) => !isSystemCauseOf(attempt))
      .map((attempt) => rerun("flakyFailure", test, attempt, options.attachments))
      .join("");
  } else if (test.status === "SKIPPED") {
    const message = summary || (run.skipReason ? `skipped: ${run.skipReason}` : "skipped");
    outcome = `      <skipped${attrs({ message })}/>\n`;
  } else if (test.status !== "PASSED") {
    // Still QUEUED or RUNNING: the wait ended first (or the run was read before it finished).
    const message = timedOut
      ? `not finished when the wait timed out (${test.status})`
      : `not finished (${test.status})`;
    outcome = `      <error${attrs({ message, type: test.status })}/>\n`;
  }
  const out = [...failureText.map(escapeXml), output(test, options.attachments)].join("\n");
  return `${open}\n${outcome}      <system-out>${out}</system-out>\n    </testcase>\n`;
}

/**
 * A test's <properties> (first in its <testcase>, as pytest and xunit write them) once the run has
 * a base: whether it is a new failure, and a failed test's failure group; empty otherwise.
 */
function testProperties(run: Run, test: TestResult): string {
  const values = {
    "testrun.newFailure": run.baseRunId ? String(test.newFailure ?? false) : null,
    "testrun.failureGroup": test.failureGroup?.id ?? null,
  };
  const props = Object.entries(values)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => `        <property${attrs({ name, value })}/>\n`)
    .join("");
  return props ? `\n      <properties>\n${props}      </properties>` : "";
}

/** The JUnit XML document of a run (finished, or as last read when the wait timed out). */
export function junitXml(run: Run, options: JunitOptions = {}): string {
  // A quarantined failure is reported skipped: counted there, not among the failures.
  const quarantined = run.tests.filter(isQuarantinedFailure).length;
  const failures = run.tests.filter((test) => test.status === "FAILED").length - quarantined;
  const skipped = run.tests.filter((test) => test.status === "SKIPPED").length + quarantined;
  const errors =
    run.tests.length - failures - skipped - run.tests.filter((t) => t.status === "PASSED").length;
  const totals = { tests: run.tests.length, failures, errors, skipped };
  const time = seconds(run.durationMs);
  const properties = {
    "testrun.run.id": run.id,
    "testrun.run.url": run.url,
    "testrun.run.status": run.status,
    "testrun.run.skipReason": run.skipReason,
    // Against the base run (docs/rest-api.md, "Comparing runs"); left out without a base.
    "testrun.newFailures": run.newFailures ?? null,
    "testrun.baseRunId": run.baseRunId ?? null,
    // Failures of quarantined cases (reported skipped); left out when there are none.
    "testrun.quarantinedFailures": run.quarantinedFailures || null,
  };
  const props = Object.entries(properties)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => `      <property${attrs({ name, value })}/>\n`)
    .join("");
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites${attrs({ name: "Testrun", ...totals, skipped: undefined, time })}>\n` +
    `  <testsuite${attrs({ name: run.name, ...totals, time, timestamp: run.startedAt?.replace(/Z$/, ""), id: run.id, url: run.url })}>\n` +
    `    <properties>\n${props}    </properties>\n` +
    run.tests.map((test) => testcase(run, test, options)).join("") +
    "  </testsuite>\n" +
    "</testsuites>\n"
  );
}
