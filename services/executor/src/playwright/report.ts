// What the runner's JSON reporter says, as the executor reports it: each `test()` of the spec is one
// step result (its title, status, duration and error), in the order they ran (docs/runs.md,
// "Playwright specs"). Every text is redacted before it leaves this module.
import { stripVTControlCharacters } from "node:util";
import type { StepFailureCause, Variables } from "../steps/variables.js";

/** One `test()` as it went. */
export interface SpecTestOutcome {
  /** Its number, from 1, in the order the runner ran the tests. */
  number: number;
  /** Its title path below the file: `describe › test`. Redacted. */
  name: string;
  passed: boolean;
  /** The runner's `skipped` (test.skip, test.fixme): neither passed nor failed. */
  skipped: boolean;
  durationMs: number;
  /** The first line of its error, redacted, at most `maxErrorLength` characters. */
  error?: string;
  cause?: StepFailureCause;
  /** The files it attached (a trace), by name. */
  attachments: { name: string; path: string; contentType: string }[];
}

export interface SpecReport {
  tests: SpecTestOutcome[];
  /** Errors outside any test: the spec did not load (a syntax error, a bad import). Redacted. */
  loadErrors: string[];
  /** The runner's global timeout (the test's deadline) ended the run. */
  timedOut: boolean;
}

/** How the runner says its global timeout (the test's deadline) stopped the run. */
const globalTimeout = /^Timed out waiting \S+ for the test suite to run/;

export const maxErrorLength = 300;

// The parts of the reporter's JSON read here (@playwright/test's JSONReport).
interface JsonError {
  message?: string;
}
interface JsonResult {
  status: "passed" | "failed" | "timedOut" | "skipped" | "interrupted";
  duration: number;
  startTime?: string;
  error?: JsonError;
  errors?: JsonError[];
  attachments?: { name: string; path?: string; contentType: string }[];
}
interface JsonSpec {
  title: string;
  line: number;
  column: number;
  tests: { results: JsonResult[] }[];
}
interface JsonSuite {
  title: string;
  specs?: JsonSpec[];
  suites?: JsonSuite[];
}
interface JsonReport {
  suites?: JsonSuite[];
  errors?: JsonError[];
}

/** The first meaningful line of an error, without the terminal's colours. */
function firstLine(message: string | undefined): string {
  const lines = stripVTControlCharacters(message ?? "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  return lines[0] ?? "failed";
}

/**
 * Why a `test()` failed. The runner reports a status and an error's text, nothing more structured:
 * its own deadline is `timedOut`, Chromium's network errors are `net::ERR_…` codes, a locator that
 * finds several elements is a "strict mode violation"; anything else failed an expectation.
 */
export function causeOf(result: JsonResult): StepFailureCause {
  if (result.status === "timedOut") return "timeout";
  const message = stripVTControlCharacters(result.error?.message ?? "");
  if (/net::ERR_TUNNEL_CONNECTION_FAILED/.test(message)) return "egress_refused";
  if (/net::ERR_[A-Z_]+/.test(message)) return "network";
  if (/strict mode violation|resolved to \d+ elements/.test(message)) return "locator";
  if (/^\s*(TimeoutError|Error: \w+\.\w+: Timeout)/m.test(message)) return "timeout";
  return "assertion";
}

function specsOf(suite: JsonSuite, titles: string[]): { spec: JsonSpec; titles: string[] }[] {
  const own = (suite.specs ?? []).map((spec) => ({ spec, titles }));
  const nested = (suite.suites ?? []).flatMap((child) => specsOf(child, [...titles, child.title]));
  return [...own, ...nested];
}

/** The report read, each test in the order it ran (by its start; then where it is in the file). */
export function readReport(json: string, vars: Variables): SpecReport {
  const report = JSON.parse(json) as JsonReport;
  // The top suite is the file: its title is the spec's path, not part of a test's name.
  const found = (report.suites ?? []).flatMap((file) => specsOf(file, []));
  const ran = found
    .map(({ spec, titles }) => ({ spec, titles, result: spec.tests[0]?.results.at(-1) }))
    .filter((entry): entry is typeof entry & { result: JsonResult } => entry.result !== undefined)
    .sort(
      (a, b) =>
        (a.result.startTime ?? "").localeCompare(b.result.startTime ?? "") ||
        a.spec.line - b.spec.line ||
        a.spec.column - b.spec.column,
    );
  const tests = ran.map(({ spec, titles, result }, index): SpecTestOutcome => {
    const passed = result.status === "passed";
    const skipped = result.status === "skipped";
    const failed = !passed && !skipped;
    return {
      number: index + 1,
      // CompleteTest takes a step's name, as its error, up to maxErrorLength characters.
      name: vars.redact([...titles, spec.title].join(" › ")).slice(0, maxErrorLength),
      passed,
      skipped,
      durationMs: Math.max(0, Math.round(result.duration)),
      ...(failed
        ? {
            error: vars
              .redact(firstLine(result.error?.message ?? result.errors?.[0]?.message))
              .slice(0, maxErrorLength),
            cause: causeOf(result),
          }
        : {}),
      attachments: (result.attachments ?? [])
        .filter((a): a is typeof a & { path: string } => typeof a.path === "string")
        .map(({ name, path, contentType }) => ({ name, path, contentType })),
    };
  });
  const errors = (report.errors ?? []).map((error) => firstLine(error.message));
  const timedOut = errors.some((error) => globalTimeout.test(error));
  const loadErrors = errors
    .filter((error) => !globalTimeout.test(error))
    .map((error) => vars.redact(error).slice(0, maxErrorLength));
  return { tests, loadErrors, timedOut };
}
