// A Playwright spec case run by @playwright/test's own runner in a child process (docs/runs.md,
// "Playwright specs"): laid out in a fresh folder (workspace.ts), started with nothing of the
// executor's environment (launch.ts, or the sandbox), its JSON report read into one step result per
// `test()` (report.ts), its traces redacted like browser steps' before they leave the executor.
import type { PlaywrightSpec } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import { maxSpecStepResults } from "@testrun/kit";
import { type Artifact, ArtifactKind } from "../browser/artifacts.js";
import { redactTrace, TraceTooLarge, unzipRatio } from "../browser/trace-redaction.js";
import { SandboxUnavailable } from "../sandbox/index.js";
import { maxSummaryLength, type StepOutcome, type TestFailureCause } from "../steps/runner.js";
import { Variables } from "../steps/variables.js";
import { sizeText } from "../steps/wording.js";
import { type Launcher, launchDirect } from "./launch.js";
import { readReport, type SpecReport, type SpecTestOutcome } from "./report.js";
import {
  layOutSpec,
  OutputTooLarge,
  playwrightCli,
  readOutput,
  type SpecWorkspace,
  UnreadableOutput,
  type WorkspaceOptions,
} from "./workspace.js";

export interface SpecRunOptions {
  baseUrl: string;
  /** The project's variables: each reaches the spec as `process.env.NAME`, and is redacted. */
  variables: Readonly<Record<string, string>>;
  /** The whole test's deadline (TEST_DEADLINE_MS). */
  deadlineMs: number;
  signal?: AbortSignal;
  chromiumPath: string;
  chromiumArgs: readonly string[];
  proxyUrl?: string;
  /** The proxy with its credentials (WorkspaceOptions.proxy), in place of proxyUrl. */
  proxy?: WorkspaceOptions["proxy"];
  recordTrace?: boolean;
  /** A trace is kept up to this size, zipped (BROWSER_TRACE_MAX_BYTES). */
  traceMaxBytes: number;
  /** How the runner is started (default: a plain child process; the sandbox where available). */
  launch?: Launcher;
}

/** A step result of a spec: one `test()`, with its title and error. */
export interface SpecStepOutcome extends StepOutcome {
  name: string;
  skipped: boolean;
  error?: string;
}

export interface SpecOutcome {
  passed: boolean;
  summary: string;
  durationMs: number;
  failedStep: number;
  cause?: TestFailureCause;
  steps: SpecStepOutcome[];
  artifacts: Artifact[];
}

/** The runner's JSON report read, at most: 200 tests with their errors and attachments fit well. */
const maxReportBytes = 16 * 1024 ** 2;
/** The runner's own output kept for a summary of a crash, at most. */
const maxRunnerOutputBytes = 64 * 1024;
/** Time the runner gets past the deadline to write its report (its own global timeout is the deadline). */
const reportGraceMs = 5_000;

/** Everything the runner's process gets in its environment: the variables and what it needs. */
function runnerEnv(dir: string, variables: Readonly<Record<string, string>>): Record<string, string> {
  return {
    ...variables,
    // Set after the variables: the executor's choices win over a variable of the same name.
    HOME: dir,
    TMPDIR: dir,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    FORCE_COLOR: "0",
    NO_COLOR: "1",
    CI: "1",
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
  };
}

function summaryOf(tests: SpecTestOutcome[]): string {
  const failed = tests.find((t) => !t.passed && !t.skipped);
  if (failed) return `test ${failed.number} "${failed.name}" failed: ${failed.error ?? "failed"}`;
  const skipped = tests.filter((t) => t.skipped).length;
  const passed = tests.length - skipped;
  return `${passed} ${passed === 1 ? "test" : "tests"} passed${skipped > 0 ? `, ${skipped} skipped` : ""}`;
}

async function tracesOf(
  workspace: SpecWorkspace,
  tests: SpecTestOutcome[],
  vars: Variables,
  maxZipBytes: number,
) {
  const artifacts: Artifact[] = [];
  const notes: string[] = [];
  for (const test of tests) {
    for (const attachment of test.attachments.filter((a) => a.name === "trace")) {
      try {
        const zip = await readOutput(workspace, attachment.path, maxZipBytes);
        const content = await redactTrace(zip, vars, {
          maxZipBytes,
          maxUnzippedBytes: maxZipBytes * unzipRatio,
        });
        artifacts.push({
          kind: ArtifactKind.TRACE,
          name: "trace",
          contentType: "application/zip",
          content,
          step: test.number,
        });
      } catch (error) {
        // The file was written where the spec runs: too large, not a file of the folder, or not
        // a trace at all (a zip that does not open) is the spec's, and the trace is not kept.
        const why =
          error instanceof TraceTooLarge || error instanceof UnreadableOutput
            ? error.message
            : `not a trace Playwright wrote (${(error as Error).name})`;
        notes.push(`test ${test.number}'s trace was not kept: ${why}`);
      }
    }
  }
  return { artifacts, notes };
}

/** Runs `spec` and says how it went; every text and artifact it returns is redacted. */
export async function runSpec(spec: PlaywrightSpec, options: SpecRunOptions): Promise<SpecOutcome> {
  const vars = new Variables(options.variables);
  const started = performance.now();
  const workspace = await layOutSpec(spec, {
    baseUrl: options.baseUrl,
    deadlineMs: options.deadlineMs,
    chromiumPath: options.chromiumPath,
    chromiumArgs: options.chromiumArgs,
    proxyUrl: options.proxyUrl,
    proxy: options.proxy,
    recordTrace: options.recordTrace ?? false,
  });
  try {
    const launched = await (options.launch ?? launchDirect)({
      command: process.execPath,
      args: [playwrightCli, "test", "--config", workspace.configPath],
      cwd: workspace.dir,
      env: runnerEnv(workspace.dir, options.variables),
      deadlineMs: options.deadlineMs + reportGraceMs,
      signal: options.signal,
      maxOutputBytes: maxRunnerOutputBytes,
    }).catch((error: unknown) => {
      if (error instanceof SandboxUnavailable) return error;
      throw error;
    });
    if (launched instanceof SandboxUnavailable)
      return {
        passed: false,
        // The init's own words may name the spec's files: redacted like everything returned.
        summary: vars.redact(
          `this executor cannot run Playwright specs: ${launched.message} (docs/security.md)`,
        ),
        durationMs: Math.round(performance.now() - started),
        failedStep: 0,
        cause: "browser",
        steps: [],
        artifacts: [],
      };
    const durationMs = Math.round(performance.now() - started);
    options.signal?.throwIfAborted();
    const json = await readOutput(workspace, workspace.reportPath, maxReportBytes).then(
      (bytes) => bytes.toString("utf8"),
      (error: unknown) => (error instanceof OutputTooLarge ? error : undefined),
    );
    if (json instanceof OutputTooLarge)
      // What the tests printed is kept in the report: a spec that prints that much made it so.
      return {
        passed: false,
        summary: `the spec's report is larger than ${sizeText(maxReportBytes)}, the most read: its tests printed too much (what a test prints is kept in the report)`,
        durationMs,
        failedStep: 0,
        cause: "assertion",
        steps: [],
        artifacts: [],
      };
    let report: SpecReport | undefined;
    try {
      report = json === undefined ? undefined : readReport(json, vars);
    } catch (error) {
      // The spec ran in the runner's process: it may have filled its folder before the report was
      // written, or written over it. Its own doing, said as such, never the executor's error.
      return {
        passed: false,
        summary: `the Playwright runner's report could not be read (${(error as Error).name}): the spec may have filled its folder or written over the report`,
        durationMs,
        failedStep: 0,
        cause: "assertion",
        steps: [],
        artifacts: [],
      };
    }
    const pastDeadline = `the spec ran past the test's deadline of ${options.deadlineMs} ms`;
    if (report === undefined || (report.timedOut && !report.tests.some((t) => !t.passed && !t.skipped))) {
      // No report, or the runner's global timeout ended it before any test failed: the runner did
      // not finish (the deadline, out of memory, crashed).
      const timedOut = launched.timedOut || report?.timedOut === true;
      return {
        passed: false,
        summary: timedOut
          ? pastDeadline
          : `the Playwright runner stopped without a report (${launched.signal ?? `exit code ${launched.exitCode}`})`,
        durationMs,
        failedStep: 0,
        cause: timedOut ? "timeout" : "browser",
        steps: [],
        artifacts: [],
      };
    }
    const steps = report.tests.map(
      (t): SpecStepOutcome => ({
        number: t.number,
        name: t.name,
        passed: t.passed || t.skipped,
        skipped: t.skipped,
        durationMs: t.durationMs,
        ...(t.error !== undefined ? { error: t.error } : {}),
      }),
    );
    const { artifacts } = await tracesOf(workspace, report.tests, vars, options.traceMaxBytes);
    if (report.loadErrors.length > 0 || report.tests.length === 0) {
      const why = report.loadErrors[0] ?? "no test() ran";
      return {
        passed: false,
        summary: `the spec did not load: ${why}`.slice(0, maxSummaryLength),
        durationMs,
        failedStep: 0,
        cause: "assertion",
        steps,
        artifacts,
      };
    }
    if (report.tests.length > maxSpecStepResults)
      return {
        passed: false,
        summary: `the spec has ${report.tests.length} test()s, more than the ${maxSpecStepResults} one test case reports: split it into several spec files`,
        durationMs,
        failedStep: 0,
        cause: "assertion",
        steps: steps.slice(0, maxSpecStepResults),
        artifacts: artifacts.filter((artifact) => (artifact.step ?? 0) <= maxSpecStepResults),
      };
    const failed = report.tests.find((t) => !t.passed && !t.skipped);
    return {
      passed: failed === undefined,
      summary: summaryOf(report.tests).slice(0, maxSummaryLength),
      durationMs,
      failedStep: failed?.number ?? 0,
      ...(failed ? { cause: failed.cause ?? "assertion" } : {}),
      steps,
      artifacts,
    };
  } finally {
    await workspace.dispose();
  }
}
