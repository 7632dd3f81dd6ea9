import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { EgressGuard } from "@testrun/kit/egress";
import type { Artifact } from "../browser/artifacts.js";
import { BrowserLost, type BrowserPool, BrowserUnavailable } from "../browser/pool.js";
import { TestBrowser } from "../browser/test-browser.js";
import { unzipRatio } from "../browser/trace-redaction.js";
import { browserStepKind } from "./browser.js";
import { httpStepKind } from "./http.js";
import type { StepKind, StepKindName, StepKindRegistry } from "./kind.js";
import { StepFailure, type StepFailureCause, Variables } from "./variables.js";
import { durationText, own, type Part, quoted, Said, say } from "./wording.js";

/** Every step kind the executor can run. A new kind is a new module added here. */
export const stepKinds: StepKindRegistry = {
  http: httpStepKind,
  browser: browserStepKind,
};

export const maxSummaryLength = 300;

/**
 * Why a test failed as the executor reports it: a step's cause, the environment's when the run's
 * base URL did not answer either (executor.ts), or the browser's when it crashed under the test.
 */
export type TestFailureCause = StepFailureCause | "environment_unreachable" | "browser";

/** A zipped trace is kept up to this size by default (BROWSER_TRACE_MAX_BYTES). */
export const defaultTraceMaxBytes = 32 * 1024 * 1024;

/** How one step that ran went (CompleteTestRequest.step_results). */
export interface StepOutcome {
  /** The step's number, from 1. */
  number: number;
  passed: boolean;
  durationMs: number;
}

export interface TestOutcome {
  passed: boolean;
  /** One line, at most 300 characters, every variable value replaced by `{{NAME}}`. */
  summary: string;
  durationMs: number;
  /** The number (from 1) of the step that failed; 0 when the test passed. */
  failedStep: number;
  /** Why it failed (CompleteTestRequest.cause); absent when it passed. */
  cause?: TestFailureCause;
  /** Each step that ran, in order (the ones after a failed step did not run). */
  steps: StepOutcome[];
  /**
   * What the test kept, redacted: a failed HTTP step's response, what its browser kept (screenshots,
   * trace, log); empty for a passed test without browser steps.
   */
  artifacts: Artifact[];
}

export interface RunOptions {
  baseUrl: string;
  /** The project's variables: name -> value. Never logged, never returned. */
  variables: Readonly<Record<string, string>>;
  /** Aborting it stops the test; runSteps then rejects with the signal's reason. */
  signal?: AbortSignal;
  kinds?: StepKindRegistry;
  /** What every step's connections go through (EGRESS_ALLOW_CIDRS / EGRESS_DENY_CIDRS). */
  egress: EgressGuard;
  /** How much of each response body a step reads (RESPONSE_MAX_BYTES; default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * The whole test's deadline (TEST_DEADLINE_MS), besides each step's own timeout: past it, the
   * step running is stopped and the test fails, saying so.
   */
  deadlineMs?: number;
  /** Where browser steps get their browser context; without it they fail, saying so. */
  browsers?: BrowserPool;
  /**
   * The test's project: its browser runs no other project's test at the same time. The executor
   * always gives it; without it (tests of the runner) all such tests count as one project.
   */
  project?: string;
  /** Keep the Playwright trace even when the test passes (TestAssignment.record_trace). */
  recordTrace?: boolean;
  /** The largest zipped trace kept (BROWSER_TRACE_MAX_BYTES; default 32 MiB). */
  traceMaxBytes?: number;
}

/** The reason a test's own deadline aborts its step with. */
class DeadlinePassed extends Error {}

/**
 * Runs a test's steps in order; the first failing step fails the test and the rest do not run.
 * Rejects with the signal's reason when the test is stopped, with BrowserLost when the browser
 * crashed under it (the test is then run again under its lease rules: executor.ts), and with
 * BrowserUnavailable when its browser could not be started (the test is handed back).
 */
export async function runSteps(steps: readonly Step[], options: RunOptions): Promise<TestOutcome> {
  const started = performance.now();
  const vars = new Variables(options.variables);
  const outer = options.signal ?? new AbortController().signal;
  const deadline = new AbortController();
  const timer =
    options.deadlineMs === undefined
      ? undefined
      : setTimeout(() => deadline.abort(new DeadlinePassed()), options.deadlineMs);
  const signal = AbortSignal.any([outer, deadline.signal]);
  const kinds = options.kinds ?? stepKinds;
  const traceMaxBytes = options.traceMaxBytes ?? defaultTraceMaxBytes;
  const browser =
    options.browsers &&
    new TestBrowser(
      options.browsers,
      vars,
      { maxZipBytes: traceMaxBytes, maxUnzippedBytes: traceMaxBytes * unzipRatio },
      options.project ?? "",
    );
  const ran: StepOutcome[] = [];
  /** What the steps kept (a failed HTTP step's response), before the browser's artifacts. */
  const kept: Artifact[] = [];
  const outcome = (
    passed: boolean,
    summary: Said,
    failedStep = 0,
    cause?: StepFailureCause,
  ): TestOutcome => ({
    passed,
    summary: oneLine(summary, vars),
    durationMs: Math.round(performance.now() - started),
    failedStep,
    ...(cause && { cause }),
    steps: ran,
    artifacts: [],
  });

  let result: TestOutcome | undefined;
  try {
    result = await (async () => {
      for (const [index, step] of steps.entries()) {
        // The step's name is the test's text (redacted), its number the executor's.
        const label = say`step ${own(index + 1)} ${JSON.stringify(step.name)}`;
        const overDeadline = () =>
          outcome(
            false,
            say`${label}: the test ran past its deadline of ${own(durationText(options.deadlineMs ?? 0))}`,
            index + 1,
            "timeout",
          );
        outer.throwIfAborted();
        if (deadline.signal.aborted) return overDeadline();
        const stepStarted = performance.now();
        const ranFor = (passed: boolean) =>
          ran.push({ number: index + 1, passed, durationMs: Math.round(performance.now() - stepStarted) });
        try {
          if (!step.kind.case) throw new StepFailure(say`the step has no kind`);
          const kind = kinds[step.kind.case] as StepKind<StepKindName> | undefined;
          if (!kind) throw new StepFailure(say`unsupported step kind ${own(step.kind.case)}`);
          const { maxBodyBytes, egress } = options;
          await kind.run(step.kind.value, {
            baseUrl: options.baseUrl,
            vars,
            signal,
            maxBodyBytes,
            egress,
            step: index + 1,
            browser,
            keep: (artifact) => kept.push(artifact),
          });
          ranFor(true);
        } catch (error) {
          if (outer.aborted) throw outer.reason;
          if (error instanceof BrowserLost || error instanceof BrowserUnavailable) throw error;
          ranFor(false);
          if (deadline.signal.aborted) return overDeadline();
          const why =
            error instanceof StepFailure
              ? error.said
              : // An executor fault, not the target's: its message may hold anything, so it is not repeated.
                say`executor error (${own(error instanceof Error ? error.name : "unknown")})`;
          return outcome(
            false,
            say`${label}: ${why}`,
            index + 1,
            error instanceof StepFailure ? error.failureCause : "assertion",
          );
        }
      }
      return outcome(true, steps.length === 1 ? say`1 step passed` : say`${own(steps.length)} steps passed`);
    })();
  } finally {
    clearTimeout(timer);
    // Stopped or lost (no result): the context is closed and nothing is kept.
    const end = result && { failedStep: result.failedStep, recordTrace: options.recordTrace ?? false };
    const artifacts = (await browser?.finish(end)) ?? [];
    if (result) result.artifacts = [...kept, ...artifacts];
  }
  return result;
}

/**
 * Redacts, then makes one line, then redacts again (collapsing whitespace can turn "a\nb" into a
 * value "a b"), and only then clips: clipping first could cut a value so that it is no longer
 * recognised. The executor's own words are never rewritten (a plain string is all from elsewhere).
 */
export function oneLine(text: Said | string, vars: Variables): string {
  const said = text instanceof Said ? text : quoted(text);
  const line = vars
    .redactParts(collapseWhitespace(vars.redactParts(said.parts)))
    .map((part) => part.text)
    .join("");
  return line.length > maxSummaryLength ? `${line.slice(0, maxSummaryLength - 1)}…` : line;
}

/** Every run of whitespace as one space, across pieces too, none at either end; pieces keep their writer. */
function collapseWhitespace(parts: readonly Part[]): Part[] {
  const out: Part[] = [];
  let spaceBefore = true;
  for (const part of parts) {
    let text = part.text.replace(/\s+/g, " ");
    if (spaceBefore && text.startsWith(" ")) text = text.slice(1);
    if (text === "") continue;
    spaceBefore = text.endsWith(" ");
    out.push({ text, own: part.own });
  }
  const last = out.at(-1);
  if (last?.text.endsWith(" ")) last.text = last.text.slice(0, -1);
  if (last?.text === "") out.pop();
  return out;
}
