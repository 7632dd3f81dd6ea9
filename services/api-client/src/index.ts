// @testrun/api-client: a typed client of the /v1 REST API (docs/rest-api.md), for testrun (the
// CLI, services/testrun-cli) and the MCP tools (services/mcp-tools), which the gateway serves too.

export { artifactsInOrder, failureScreenshot, formatBytes } from "./artifacts.js";
export {
  ApiError,
  type ArtifactRef,
  type ClientOptions,
  NetworkError,
  type RequestOptions,
  type Started,
  TestrunClient,
  TooLarge,
} from "./client.js";
export type * from "./failures.js";
export type * from "./health.js";
export {
  abortableSleep,
  DeadlineReached,
  describeFailure,
  type RetryPolicy,
  retryable,
  withRetries,
} from "./retry.js";
export { MaybeStarted, type StartOptions, type StartOutcome, startedRunOf, startSafely } from "./start.js";
export type * from "./types.js";
export { version } from "./version.js";
