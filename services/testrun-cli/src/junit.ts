// The JUnit XML report (--junit): the format CI test views read (GitHub test reporters, GitLab
// `artifacts:reports:junit`, Jenkins `junit`). One <testsuite> per run and one <testcase> per test;
// a failed test has a <failure> whose message is its summary, a skipped one <skipped>; times are in
// seconds. Only what the Jenkins/Surefire schema allows, in its order.
//
// A test's artifacts go in its <system-out>: with --artifacts, one `[[ATTACHMENT|path]]` line per
// downloaded file, the convention of Jenkins' JUnit attachments plugin that GitLab reads too (it
// shows a test case's first one: the failure screenshot comes first); otherwise their urls.
import { artifactsInOrder, type Run, type TestResult } from "@testrun/api-client";

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

/** A test's <system-out> lines: its page, then each artifact as an attachment or its url. */
function output(test: TestResult, attachments: ReadonlyMap<string, string> | undefined): string {
  const lines = [test.url];
  for (const artifact of artifactsInOrder(test)) {
    const file = attachments?.get(artifact.id);
    lines.push(file ? `[[ATTACHMENT|${file}]]` : `${artifact.kind} ${artifact.name}: ${artifact.url}`);
  }
  return lines.map(escapeXml).join("\n");
}

function testcase(run: Run, test: TestResult, options: JunitOptions): string {
  const timedOut = options.timedOut ?? false;
  const open = `    <testcase${attrs({ name: test.name, classname: run.name, time: seconds(test.durationMs) })}>`;
  const summary = test.summary || "";
  let outcome = "";
  if (test.status === "FAILED") {
    outcome = `      <failure${attrs({ message: summary, type: "FAILED" })}>${escapeXml(`${summary}\n${test.url}`)}</failure>\n`;
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
  return `${open}\n${outcome}      <system-out>${output(test, options.attachments)}</system-out>\n    </testcase>\n`;
}

/** The JUnit XML document of a run (finished, or as last read when the wait timed out). */
export function junitXml(run: Run, options: JunitOptions = {}): string {
  const failures = run.tests.filter((test) => test.status === "FAILED").length;
  const skipped = run.tests.filter((test) => test.status === "SKIPPED").length;
  const errors =
    run.tests.length - failures - skipped - run.tests.filter((t) => t.status === "PASSED").length;
  const totals = { tests: run.tests.length, failures, errors, skipped };
  const time = seconds(run.durationMs);
  const properties = {
    "testrun.run.id": run.id,
    "testrun.run.url": run.url,
    "testrun.run.status": run.status,
    "testrun.run.skipReason": run.skipReason,
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
