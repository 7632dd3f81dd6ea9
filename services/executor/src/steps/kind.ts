import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { EgressGuard } from "@testrun/kit/egress";
import type { Artifact } from "../browser/artifacts.js";
import type { TestBrowser } from "../browser/test-browser.js";
import type { Variables } from "./variables.js";

/** The step kinds of step.proto, named by their `kind` oneof case ("http", later "browser"…). */
export type StepKindName = NonNullable<Step["kind"]["case"]>;

/** The message of one step kind, e.g. HttpStep for "http". */
export type StepOf<K extends StepKindName> = Extract<Step["kind"], { case: K }>["value"];

/** What a step kind gets to run one step. */
export interface StepContext {
  /** The environment's base URL, without trailing slash. */
  baseUrl: string;
  /** Interpolation (`vars.interpolate`) and saving (`vars.save`) for this test. */
  vars: Variables;
  /** Aborted when the test must stop (lease lost, shutdown): stop as soon as possible. */
  signal: AbortSignal;
  /**
   * Every connection to the environment goes through it (`egress.fetch`, or its dispatcher, lookup
   * or connect for clients fetch does not cover): it refuses addresses the executors may not reach.
   */
  egress: EgressGuard;
  /** How much of a response body a step reads (default: http.ts defaultMaxBodyBytes, 1 MiB). */
  maxBodyBytes?: number;
  /** The step's number (1 for the first): what it stores is filed under it (a screenshot). */
  step: number;
  /**
   * The test's browser, whose page opens at its first browser step; absent where the executor runs
   * no browser (browser steps then fail saying so).
   */
  browser?: TestBrowser;
  /**
   * Keeps an artifact with the test's result, redacted (a failed HTTP step's response); absent
   * where nothing is kept.
   */
  keep?: (artifact: Artifact) => void;
}

/**
 * One kind of step. `run` resolves when the step passed and throws StepFailure (message: what
 * went wrong, in the fewest words) when it failed. Anything else it throws is an executor fault.
 */
export interface StepKind<K extends StepKindName> {
  run(step: StepOf<K>, ctx: StepContext): Promise<void>;
}

/** One implementation per oneof case: adding a case to step.proto fails the typecheck until it has one. */
export type StepKindRegistry = { [K in StepKindName]: StepKind<K> };
