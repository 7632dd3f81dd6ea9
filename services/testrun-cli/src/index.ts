// The library of @testrun/testrun-cli: a typed client of the /v1 REST API, and the CLI's parts.

export { type Io, main, type Result } from "./cli.js";
export {
  ApiError,
  type ClientOptions,
  NetworkError,
  type RequestOptions,
  type Started,
  TestrunClient,
} from "./client.js";
export { junitXml } from "./junit.js";
export { ExitCode, exitCodeOf } from "./outcome.js";
export { DeadlineReached, retryable, withRetries } from "./retry.js";
export { MaybeStarted, type StartOutcome, startSafely } from "./start.js";
export { markdownSummary } from "./summary.js";
export type * from "./types.js";
export { type WaitOptions, waitForRun } from "./wait.js";
