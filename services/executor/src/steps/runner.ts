import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { httpStepKind } from "./http.js";
import type { StepKind, StepKindName, StepKindRegistry } from "./kind.js";
import { StepFailure, Variables } from "./variables.js";

/** Every step kind the executor can run. A new kind is a new module added here. */
export const stepKinds: StepKindRegistry = { http: httpStepKind };

export const maxSummaryLength = 300;

export interface TestOutcome {
  passed: boolean;
  /** One line, at most 300 characters, every variable value replaced by `{{NAME}}`. */
  summary: string;
  durationMs: number;
  /** The number (from 1) of the step that failed; 0 when the test passed. */
  failedStep: number;
}

export interface RunOptions {
  baseUrl: string;
  /** The project's variables: name -> value. Never logged, never returned. */
  variables: Readonly<Record<string, string>>;
  /** Aborting it stops the test; runSteps then rejects with the signal's reason. */
  signal?: AbortSignal;
  kinds?: StepKindRegistry;
}

/** Runs a test's steps in order; the first failing step fails the test and the rest do not run. */
export async function runSteps(steps: readonly Step[], options: RunOptions): Promise<TestOutcome> {
  const started = performance.now();
  const vars = new Variables(options.variables);
  const signal = options.signal ?? new AbortController().signal;
  const kinds = options.kinds ?? stepKinds;
  const outcome = (passed: boolean, summary: string, failedStep = 0): TestOutcome => ({
    passed,
    summary: oneLine(summary, vars),
    durationMs: Math.round(performance.now() - started),
    failedStep,
  });

  for (const [index, step] of steps.entries()) {
    signal.throwIfAborted();
    const label = `step ${index + 1} ${JSON.stringify(step.name)}`;
    try {
      if (!step.kind.case) throw new StepFailure("the step has no kind");
      const kind = kinds[step.kind.case] as StepKind<StepKindName> | undefined;
      if (!kind) throw new StepFailure(`unsupported step kind ${step.kind.case}`);
      await kind.run(step.kind.value, { baseUrl: options.baseUrl, vars, signal });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const why =
        error instanceof StepFailure
          ? error.message
          : // An executor fault, not the target's: its message may hold anything, so it is not repeated.
            `executor error (${error instanceof Error ? error.name : "unknown"})`;
      return outcome(false, `${label}: ${why}`, index + 1);
    }
  }
  return outcome(true, steps.length === 1 ? "1 step passed" : `${steps.length} steps passed`);
}

/**
 * Redacts, then makes one line, then redacts again (collapsing whitespace can turn "a\nb" into a
 * value "a b"), and only then clips: clipping first could cut a value so that it is no longer
 * recognised.
 */
export function oneLine(text: string, vars: Variables): string {
  const line = vars.redact(vars.redact(text).replace(/\s+/g, " ").trim());
  return line.length > maxSummaryLength ? `${line.slice(0, maxSummaryLength - 1)}…` : line;
}
